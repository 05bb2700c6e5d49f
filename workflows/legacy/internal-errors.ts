import { log } from '@temporalio/workflow';
import { errorDetail, publicErrorOf, typedErrorOf } from './core/errors';
import type { TurnError } from './core/turn';

/**
 * An error as a client or the model may see it (core/errors.ts): a typed error as it is; anything else becomes
 * `internal_error`, and what it said goes to the worker's log at error level, with `what` failed.
 */
export function publicError(err: unknown, what: string): TurnError {
  if (!typedErrorOf(err)) log.error(`${what} failed with an internal error`, { error: errorDetail(err) });
  return publicErrorOf(err);
}
