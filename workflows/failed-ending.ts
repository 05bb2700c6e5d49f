import { ActivityFailure } from '@temporalio/workflow';
import { thrownEnding, type FailedEnding } from '../core/run/endings';
import { publicError } from './internal-errors';

/**
 * How a run ends when its code throws (not a cancellation): the model's errors, or anything else. A typed error (a
 * model or skill error) is shown as it is; anything else is `internal_error`, its detail in the worker's log.
 */
export function failedEnding(err: unknown): FailedEnding {
  const source = err instanceof ActivityFailure && err.activityType === 'callModel' ? 'model' : 'other';
  return thrownEnding(source, publicError(err, 'The run'));
}
