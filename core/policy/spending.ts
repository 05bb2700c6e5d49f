import type { Reservation } from '../budget';
import { sharedBudgetEnd } from './endings';
import type { InvocationCount, PolicyState, Reduction, ReserveAsk, ToolCall } from './types';
import { allow, refuse } from './verdicts';

/**
 * Spending bounds: invoke_skill calls capped per model response and per turn, the token budget
 * handed down to the skill runs a run starts, and each round's tokens reserved in the user's day ledger.
 */

/** A new model response: none of its invoke_skill calls made yet. */
export const newResponse = (invocations: InvocationCount): InvocationCount => ({ ...invocations, inResponse: 0 });

/** What a round of a run with a budget reserves: its estimate, within what the run has left (never nothing). */
export function reserveAskOf(state: PolicyState, tokens: number, estimate: number): ReserveAsk | undefined {
  if (state.tokenBudget === null) return undefined;
  const left = state.tokenBudget - tokens;
  return { tokens: Math.min(Math.max(estimate, 1), left), left };
}

/** The ledger's answer: a round it held nothing for is not made. */
export function onTokensReserved(state: PolicyState, reservation: Reservation): Reduction {
  return reservation.granted ? allow(state) : { state, verdict: sharedBudgetEnd(state) };
}

/**
 * An invoke_skill the scope allows, within the caps: counted, with what the skill run may spend (the calls the run has
 * left, and its tokens left). A call past a cap, or once the tokens are used up, is refused (the model sees why).
 */
export function onInvocationAllowed(state: PolicyState, skill: string, tokens: number): Reduction {
  const { invocations, tokenBudget } = state;
  const { maxInvocationsPerResponse: perResponse, maxInvocationsPerTurn: perTurn } = state.settings;
  const notRun = `${skill} was not invoked`;
  if (invocations.inResponse >= perResponse) {
    return refuse(
      state,
      `At most ${perResponse} invoke_skill calls run per model response (SKILLFLOW_MAX_INVOCATIONS_PER_RESPONSE); ${notRun}. Call it again in a later response if you still need it.`,
    );
  }
  if (invocations.left <= 0) {
    return refuse(
      state,
      `This turn has made its ${perTurn} invoke_skill calls, its skill runs' included (SKILLFLOW_MAX_INVOCATIONS_PER_TURN); ${notRun}. Go on without it.`,
    );
  }
  if (tokenBudget !== null && tokens >= tokenBudget) {
    return refuse(
      state,
      `The model tokens this ${state.depth > 0 ? 'skill run' : 'turn'} was given of the user's daily budget are used up (SKILLFLOW_USER_DAILY_TOKENS); ${notRun}.`,
    );
  }
  const left = invocations.left - 1;
  const next = { ...state, invocations: { left, inResponse: invocations.inResponse + 1 } };
  return allow(next, { handDown: { invocations: left, tokens: tokenBudget === null ? null : tokenBudget - tokens } });
}

/** An invoke_skill the policy counted started nothing (its input was invalid): the call is given back. */
export function unstarted(state: PolicyState, call: ToolCall): Reduction {
  const { invocations } = state;
  const counted = typeof (call.input as Record<string, unknown> | null)?.skill === 'string';
  return allow(
    counted ? { ...state, invocations: { left: invocations.left + 1, inResponse: invocations.inResponse - 1 } } : state,
  );
}

/** A skill run ended: the calls it and the runs under it made count against this run's. */
export function afterInvocation(invocations: InvocationCount, runs: number): InvocationCount {
  return { ...invocations, left: Math.max(0, invocations.left - runs) };
}
