import { createHash, randomUUID } from 'node:crypto';
import { HttpError } from './errors';

/**
 * `Idempotency-Key` on the three POSTs that create something, mapped onto Temporal's own ids so that Temporal does the
 * deduplication where it can: a session's workflow id, a checkpoint answer's `answerCheckpoint` update id. A turn's key is
 * kept by its session with the turn it started (carried across continue-as-new): a retry finds that turn there. (Not the
 * `startTurn` update id: Temporal would also repeat a first attempt's 409 to every retry, after the other turn ended.)
 */

export const idempotencyHeader = 'idempotency-key';
export const replayedHeader = 'idempotent-replayed';

const digest = (text: string, length: number) => createHash('sha256').update(text).digest('hex').slice(0, length);

/** The session a user's key names (its workflow id is `session-` and this): the same key from another user names another. */
export function sessionIdOf(userId: string, key: string): string {
  return digest(`${userId}\n${key}`, 20);
}

/** What a user's key stands for: the same key from another user is another key. Never the key itself. */
export function keyDigest(userId: string, key: string): string {
  return digest(`${userId}\n${key}`, 32);
}

/** The request a key was first used with, so that a reuse for another request is told apart from a retry. */
export function requestDigest(body: unknown): string {
  return digest(canonicalJson(body), 32);
}

/** The id of one HTTP attempt: a response carrying another attempt's id is a replay. */
export const newAttempt = (): string => randomUUID();

/** The `answerCheckpoint` update id of a key for one checkpoint and one answer: a retry is the first update again. */
export const answerUpdateId = (checkpointId: string, key: string, body: string): string =>
  `answer/${checkpointId}/${key}/${body}`;

export function keyReused(): HttpError {
  return new HttpError(
    422,
    'idempotency_key_reused',
    'This Idempotency-Key was already used for a different request; the first request stands. Send a new key for a new request.',
  );
}

/** JSON with object keys sorted, so that the same body in another key order has the same digest. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, entry]) => entry !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, entry]) => `${JSON.stringify(key)}:${canonicalJson(entry)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
