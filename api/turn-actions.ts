import { WorkflowUpdateFailedError, isGrpcServiceError, ServiceError, type Client } from '@temporalio/client';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import { CheckpointErrorType } from '../core/checkpoints';
import { terminalStatuses } from '../core/turn';
import { linkRefusals } from '../core/links';
import { answerCheckpointUpdate } from '../workflows/definitions';
import type { Config } from '../lib/config';
import type { Caller } from './caller';
import { HttpError, type ErrorDetail } from './errors';
import { answerUpdateId, keyDigest, requestDigest } from './idempotency';
import { checkedAnswer } from './input-limits';
import { answererOf, checkLinkAnswer } from './links/answers';
import type { CheckpointAccepted, CheckpointAnswer } from '../core/protocol';
import { describeVisibleTurn, publishedVisibleTurn, type TurnStates } from './turn-view';

/**
 * What a client may do to a turn, shared by the HTTP routes and the WebSocket protocol so both answer with the same
 * codes: only the turn's user or an operator may act (anyone else gets a 404), and decisions record who answered.
 */

/**
 * Answers the checkpoint with the `answerCheckpoint` update, which decides whether it is pending. Who may answer comes
 * from the turn's published state when one is kept and shows the turn not ended (no describe of the turn: the update
 * fails on a turn that has ended, and a refused update is explained as before, by describing the turn then); otherwise
 * the turn is described first.
 */
export async function answerCheckpoint(
  client: Client,
  caller: Caller,
  turnId: string,
  checkpointId: string,
  given: CheckpointAnswer,
  limits: Pick<Config, 'maxMessageChars' | 'maxMessageBytes'>,
  idempotencyKey?: string,
  states?: TurnStates,
): Promise<CheckpointAccepted> {
  const answer = checkedAnswer(given, limits);
  if (caller.link) await checkLinkAnswer(client, { ...caller, link: caller.link }, turnId, checkpointId, states);
  const by = answererOf(caller);
  const updateId =
    idempotencyKey === undefined
      ? undefined
      : answerUpdateId(checkpointId, keyDigest(caller.id, idempotencyKey), requestDigest(answer));
  const send = async () => {
    const accepted = await client.workflow.getHandle(turnId).executeUpdate(answerCheckpointUpdate, {
      args: [{ ...answer, checkpointId, by }],
      ...(updateId ? { updateId } : {}),
    });
    return { checkpointId: accepted.checkpointId, action: accepted.action, by };
  };
  const published = await publishedVisibleTurn(client, caller, turnId, states);
  if (published && !terminalStatuses.has(published.status)) {
    try {
      return await send();
    } catch (err) {
      const description = await describeVisibleTurn(client, caller, turnId);
      if (description.status.name !== 'RUNNING') throw turnEndedAnswer(turnId);
      throw mapCheckpointError(err, turnId);
    }
  }
  const description = await describeVisibleTurn(client, caller, turnId);
  const running = description.status.name === 'RUNNING';
  // With a key, an ended turn still answers a retry of an answer it took (Temporal keeps the update's outcome).
  if (!running && idempotencyKey === undefined) throw turnEndedAnswer(turnId);
  try {
    return await send();
  } catch (err) {
    if (!running) throw turnEndedAnswer(turnId);
    throw mapCheckpointError(err, turnId);
  }
}

const turnEndedAnswer = (turnId: string) =>
  new HttpError(409, 'checkpoint_not_pending', `Turn ${turnId} has ended; its checkpoints can no longer be answered.`);

export async function cancelTurn(client: Client, caller: Caller, turnId: string): Promise<void> {
  if (caller.link) throw new HttpError(403, linkRefusals.routeNotAllowed, 'An answer link cannot cancel a turn.');
  const description = await describeVisibleTurn(client, caller, turnId);
  if (description.status.name !== 'RUNNING') throw turnEnded(turnId);
  try {
    await client.workflow.getHandle(turnId).cancel();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError || isAlreadyClosed(err)) throw turnEnded(turnId);
    throw err;
  }
}

const turnEnded = (turnId: string) => new HttpError(409, 'turn_ended', `Turn ${turnId} has already ended.`);

function isAlreadyClosed(err: unknown): boolean {
  const grpc = err instanceof ServiceError ? err.cause : err;
  // NOT_FOUND or FAILED_PRECONDITION: the run closed between the read and the cancel.
  return isGrpcServiceError(grpc) && (grpc.code === 5 || grpc.code === 9);
}

/** The problems the turn listed (path, rule, allowed values, message), when it did. */
function detailsOf(value: unknown): ErrorDetail[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.filter(
    (entry): entry is ErrorDetail =>
      typeof entry?.path === 'string' && typeof entry?.rule === 'string' && typeof entry?.message === 'string',
  );
}

function mapCheckpointError(err: unknown, turnId: string): unknown {
  if (err instanceof WorkflowNotFoundError) return turnEndedAnswer(turnId);
  if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure) {
    const { type, message } = err.cause;
    if (type === CheckpointErrorType.notFound) return new HttpError(404, 'not_found', message);
    if (type === CheckpointErrorType.notPending) return new HttpError(409, 'checkpoint_not_pending', message);
    if (type === CheckpointErrorType.invalidDecision)
      return new HttpError(400, 'invalid_decision', message, undefined, detailsOf(err.cause.details?.[0]));
  }
  return err;
}
