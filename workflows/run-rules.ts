import { ActivityFailure, ApplicationFailure, patched } from '@temporalio/workflow';
import { enginePatches, rulePatches, type PolicyRules } from '../core/policy';
import type { TurnEnding, TurnError } from '../core/turn';

/** The rules of the code this run started on: each rule that changed while turns ran is behind a patch. */
export function rulesOfThisRun(): PolicyRules {
  const rules = {} as PolicyRules;
  for (const [rule, patchId] of Object.entries(rulePatches) as Array<[keyof PolicyRules, string]>) rules[rule] = patched(patchId);
  return rules;
}

/** The engine changes (not policy rules) of the code this run started on, read once when it starts. */
export function engineOfThisRun(): Record<keyof typeof enginePatches, boolean> {
  return { promptByReference: patched(enginePatches.promptByReference) };
}

/** How a run ends when its code throws (not a cancellation): the model's errors, or anything else. */
export function failedEnding(err: unknown): TurnEnding {
  const reason = err instanceof ActivityFailure && err.activityType === 'callModel' ? 'model_error' : 'internal_error';
  return { status: 'failed', reason, error: describeFailure(err) };
}

function describeFailure(err: unknown): TurnError {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) return { code: cause.type ?? 'ApplicationFailure', message: cause.message };
  if (err instanceof Error) return { code: err.name, message: err.message };
  return { code: 'unknown', message: String(err) };
}
