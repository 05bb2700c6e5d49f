import { WorkflowUpdateFailedError, isGrpcServiceError, ServiceError, type Client } from '@temporalio/client';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import { CheckpointErrorType } from '../core/checkpoints';
import { answerCheckpointUpdate } from '../workflows/definitions';
import type { Config } from '../lib/config';
import type { Caller } from './auth';
import { HttpError, type ErrorDetail } from './errors';
import { answerUpdateId, keyDigest, requestDigest } from './idempotency';
import { checkedAnswer } from './input-limits';
import type { CheckpointAccepted, CheckpointAnswer } from './schemas';
import { describeVisibleTurn } from './turn-view';

/**
 * What a client may do to a turn, shared by the HTTP routes and the WebSocket protocol so both answer with the same
 * codes: only the turn's user or an operator may act (anyone else gets a 404), and decisions record who answered.
 */

export async function answerCheckpoint(
  client: Client,
  caller: Caller,
  turnId: string,
  checkpointId: string,
  given: CheckpointAnswer,
  limits: Pick<Config, 'maxMessageChars' | 'maxMessageBytes'>,
  idempotencyKey?: string,
): Promise<CheckpointAccepted> {
  const answer = checkedAnswer(given, limits);
  const description = await describeVisibleTurn(client, caller, turnId);
  const running = description.status.name === 'RUNNING';
  // With a key, an ended turn still answers a retry of an answer it took (Temporal keeps the update's outcome).
  if (!running && idempotencyKey === undefined) throw turnEndedAnswer(turnId);
  const updateId = idempotencyKey === undefined ? undefined : answerUpdateId(checkpointId, keyDigest(caller.id, idempotencyKey), requestDigest(answer));
  try {
    const accepted = await client.workflow
      .getHandle(turnId)
      .executeUpdate(answerCheckpointUpdate, { args: [{ ...answer, checkpointId, by: caller.id }], ...(updateId ? { updateId } : {}) });
    return { checkpointId: accepted.checkpointId, action: accepted.action, by: caller.id };
  } catch (err) {
    if (!running) throw turnEndedAnswer(turnId);
    throw mapCheckpointError(err, turnId);
  }
}

const turnEndedAnswer = (turnId: string) => new HttpError(409, 'checkpoint_not_pending', `Turn ${turnId} has ended; its checkpoints can no longer be answered.`);

export async function cancelTurn(client: Client, caller: Caller, turnId: string): Promise<void> {
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
  return value.filter((entry): entry is ErrorDetail => typeof entry?.path === 'string' && typeof entry?.rule === 'string' && typeof entry?.message === 'string');
}

function mapCheckpointError(err: unknown, turnId: string): unknown {
  if (err instanceof WorkflowNotFoundError) return turnEndedAnswer(turnId);
  if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure) {
    const { type, message } = err.cause;
    if (type === CheckpointErrorType.notFound) return new HttpError(404, 'not_found', message);
    if (type === CheckpointErrorType.notPending) return new HttpError(409, 'checkpoint_not_pending', message);
    if (type === CheckpointErrorType.invalidDecision) return new HttpError(400, 'invalid_decision', message, undefined, detailsOf(err.cause.details?.[0]));
  }
  return err;
}
