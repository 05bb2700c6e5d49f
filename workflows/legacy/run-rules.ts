import { ActivityFailure, patched } from '@temporalio/workflow';
import {
  baselinePatch,
  enginePatches,
  rulePatches,
  separatePatches,
  type BaselineRule,
  type PolicyRules,
} from './core/policy';
import { thrownEnding, type FailedEnding } from './core/run/endings';
import { publicError } from './internal-errors';

/** Whether the code this run started on has a change (a patch id of core/policy/state.ts). */
export type HasPatch = (patchId: string) => boolean;

/**
 * The patches of the code this run started on, read first thing: a run of this code records baselinePatch, which
 * implies them all. A run older code began has no such marker (in replay, patched() says whether the history holds
 * it) and reads each patch where it always did, so its history replays marker for marker.
 */
export function patchesOfThisRun(): HasPatch {
  const baseline = patched(baselinePatch);
  return (patchId) => baseline || patched(patchId);
}

/**
 * The rules of the code this run started on: each rule that changed while turns ran is behind a patch (those after the
 * baseline behind one of their own, read here once, when the run starts).
 */
export function rulesOfThisRun(has: HasPatch): PolicyRules {
  const rules = {} as PolicyRules;
  for (const [rule, patchId] of Object.entries(rulePatches) as Array<[BaselineRule, string]>)
    rules[rule] = has(patchId);
  rules.spendingBounds = patched(separatePatches.spendingBounds);
  return rules;
}

/** The engine changes (not policy rules) of the code this run started on, read once when it starts. */
export function engineOfThisRun(has: HasPatch): Record<keyof typeof enginePatches, boolean> {
  return {
    promptByReference: has(enginePatches.promptByReference),
    batchedSearchAttributes: has(enginePatches.batchedSearchAttributes),
  };
}

/**
 * How a run ends when its code throws (not a cancellation): the model's errors, or anything else. A typed error (a
 * model or skill error) is shown as it is; anything else is `internal_error`, its detail in the worker's log.
 */
export function failedEnding(err: unknown): FailedEnding {
  const source = err instanceof ActivityFailure && err.activityType === 'callModel' ? 'model' : 'other';
  return thrownEnding(source, publicError(err, 'The run'));
}
