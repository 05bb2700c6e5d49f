import { CancellationScope, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { LedgerScope } from '../core/budget';
import { tokensOf, type ModelResponse } from '../core/model';
import type { End, ReserveAsk } from '../core/policy';
import type { TurnRun } from './turn-run';

/**
 * Local activities: a reservation is a short read and write of the ledger (Redis or memory) that the worker runs within
 * the workflow task, recorded as a marker, so a round costs no extra workflow tasks or activity tasks for it.
 */
const { reserveTokens, settleTokens } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10s',
  retry: { maximumAttempts: 3 },
});

/** Tokens a run holds in its user's day ledger for the model round it is about to make. */
export interface Held {
  scope: LedgerScope;
  tokens: number;
}

/**
 * Reserves the tokens the policy asks for before a round, and tells the policy what the ledger granted: what is held
 * (none when the run reserves nowhere), or the End the policy decided when nothing was left.
 */
export async function reserveRound(
  run: TurnRun,
  ask: ReserveAsk,
): Promise<{ kind: 'held'; held: Held | undefined } | End> {
  const scope = run.ledgerScope;
  if (!scope) return { kind: 'held', held: undefined };
  const reservation = await reserveTokens({ scope, tokens: ask.tokens, left: ask.left });
  const answer = run.decide({ type: 'tokens.reserved', reservation });
  if (answer.kind === 'end') return answer;
  return { kind: 'held', held: { scope, tokens: reservation.granted ? reservation.tokens : 0 } };
}

/** Makes a round's model call, then settles its reservation with what it used (nothing, when the call failed). */
export async function spend(held: Held | undefined, call: () => Promise<ModelResponse>): Promise<ModelResponse> {
  if (!held) return call();
  let used = 0;
  try {
    const response = await call();
    used = tokensOf(response.usage);
    return response;
  } finally {
    await CancellationScope.nonCancellable(() => settleTokens({ scope: held.scope, reserved: held.tokens, used }));
  }
}
