import { ActivityFailure, patched } from '@temporalio/workflow';
import { enginePatches, rulePatches, type PolicyRules } from '../core/policy';
import type { TurnEnding } from '../core/turn';
import { publicError } from './internal-errors';

/** The rules of the code this run started on: each rule that changed while turns ran is behind a patch. */
export function rulesOfThisRun(): PolicyRules {
  const rules = {} as PolicyRules;
  for (const [rule, patchId] of Object.entries(rulePatches) as Array<[keyof PolicyRules, string]>) rules[rule] = patched(patchId);
  return rules;
}

/** The engine changes (not policy rules) of the code this run started on, read once when it starts. */
export function engineOfThisRun(): Record<keyof typeof enginePatches, boolean> {
  return { promptByReference: patched(enginePatches.promptByReference), batchedSearchAttributes: patched(enginePatches.batchedSearchAttributes) };
}

/**
 * How a run ends when its code throws (not a cancellation): the model's errors, or anything else. A typed error (a
 * model or skill error) is shown as it is; anything else is `internal_error`, its detail in the worker's log.
 */
export function failedEnding(err: unknown): TurnEnding {
  const reason = err instanceof ActivityFailure && err.activityType === 'callModel' ? 'model_error' : 'internal_error';
  return { status: 'failed', reason, error: publicError(err, 'The run') };
}
