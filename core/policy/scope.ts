import { engineToolNames } from '../skills/tool-names';
import { describeAllowed, isUnfinished } from './plan';
import type { PolicyState } from './types';

/**
 * What the model may call now, as functions of the policy state. The child-skills issue adds a skill's `children`
 * and the nesting depth to loadRefusal; the tools issue makes toolsInScope depend on the active skill's tools.
 */

/** The tools the model may call now: the engine's own, in every turn. */
export function toolsInScope(_state: PolicyState): readonly string[] {
  return engineToolNames;
}

/** Why the model may not load this skill now, or null: a routing choice allows exactly the chosen skill; an unfinished plan, none. */
export function loadRefusal(state: PolicyState, name: string): string | null {
  const { route, plan } = state;
  if (route) {
    if (route.skill === name) return null;
    return route.skill
      ? `The human chose ${route.skill} at ${route.from}; only that skill may be loaded now.`
      : `The human chose to stop at ${route.from}; give your final answer now without loading another skill.`;
  }
  if (isUnfinished(plan) && plan.skill !== name) {
    return `Skill ${plan.skill} is in progress and its plan is not complete. Allowed next: ${describeAllowed(plan)}.`;
  }
  return null;
}
