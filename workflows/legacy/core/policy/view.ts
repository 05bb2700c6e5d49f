import { remainingSteps } from './plan';
import type { PolicyState } from './types';

/** Read-only views of the policy state for the workflow to publish: nothing here decides anything. */

/** The plan's position, as operators and clients see it: skill, last step, the steps still required. */
export function positionOf(state: PolicyState): { skill: string | null; step: string | null; remaining: string[] } {
  const { plan } = state;
  return { skill: plan?.skill ?? null, step: plan?.current ?? null, remaining: plan ? remainingSteps(plan) : [] };
}

/** Tool results compaction must keep whole: the loaded skill's and the current step's instructions. */
export function protectedToolUseIds(state: PolicyState): ReadonlySet<string> {
  return new Set(Object.values(state.instructions));
}
