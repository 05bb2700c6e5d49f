import type { Client } from '@temporalio/client';
import { linkVerdict, type LinkGrant } from '../../core/links';
import type { PendingCheckpoint } from '../../core/protocol';
import { terminalStatuses } from '../../core/turn';
import { turnStateQuery } from '../../workflows/definitions';
import type { Caller } from '../caller';
import { HttpError } from '../errors';
import { readTurn, sessionIdOfTurn, type TurnStates } from '../turn-view';

const queryDeadlineMs = 5_000;

/** Who a decision records as having answered: the link, for an answer that came through one. */
export const answererOf = (caller: Caller) => (caller.link ? `link:${caller.link.id}` : caller.id);

/**
 * Before an answer that came through a link: the checkpoint must be the one the turn waits at now (a checkpoint not
 * yet asked has no name to check), and its name must match the link's pattern. 409 and 403 otherwise.
 */
export async function checkLinkAnswer(
  client: Client,
  caller: Caller & { link: LinkGrant },
  turnId: string,
  checkpointId: string,
  states?: TurnStates,
): Promise<void> {
  const pending = await pendingCheckpoint(client, caller, turnId, checkpointId, states);
  if (!pending || pending.id !== checkpointId)
    throw new HttpError(
      409,
      'checkpoint_not_pending',
      `Checkpoint ${checkpointId} is not the one turn ${turnId} waits at${pending ? ` (${pending.id})` : ''}; read the turn again.`,
    );
  const verdict = linkVerdict(caller.link, {
    kind: 'answer',
    sessionId: sessionIdOfTurn(turnId),
    checkpointName: pending.name,
  });
  if (!verdict.allowed) throw new HttpError(403, verdict.code, verdict.message);
}

/** The turn's pending checkpoint as its published state has it, or as the turn answers when that one is another. */
async function pendingCheckpoint(
  client: Client,
  caller: Caller,
  turnId: string,
  checkpointId: string,
  states?: TurnStates,
): Promise<PendingCheckpoint | null> {
  const view = await readTurn(client, caller, turnId, states);
  if (view.pendingCheckpoint?.id === checkpointId || terminalStatuses.has(view.status)) return view.pendingCheckpoint;
  const state = await client.connection
    .withDeadline(Date.now() + queryDeadlineMs, () => client.workflow.getHandle(turnId).query(turnStateQuery))
    .catch(() => undefined);
  return state?.pendingCheckpoint ?? view.pendingCheckpoint;
}
