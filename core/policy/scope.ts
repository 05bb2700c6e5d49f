import { engineToolNames } from '../skills/tool-names';
import { grantedTools } from '../tools/grants';
import type { ToolSpec } from '../tools/types';
import { describeAllowed, isUnfinished } from './plan';
import type { PolicyState } from './types';

/**
 * What the model may call now, as functions of the policy state. The child-skills issue adds a skill's `children`
 * and the nesting depth to loadRefusal. The tool scope is a function of the active skill alone, so a child run whose
 * policy starts with its skill active gets its skill's tools for its whole run.
 */

/** The grants in force: the active skill's (none when it declares none), or the root turn's configured default. */
export function grantsInForce(state: PolicyState): readonly string[] {
  return state.active ? state.active.grants : state.rootGrants;
}

/** The registered tools the model may call now, in the registry's order. */
export function registeredToolsInScope(state: PolicyState): ToolSpec[] {
  return grantedTools(state.tools, grantsInForce(state));
}

/** The tools the model may call now: the engine's own in every turn, then the registered tools granted now. */
export function toolsInScope(state: PolicyState): readonly string[] {
  return [...engineToolNames, ...registeredToolsInScope(state).map((tool) => tool.name)];
}

/** Why a registered tool is not in scope now, in words for the model. */
export function toolScopeRefusal(state: PolicyState, name: string): string {
  const granted = registeredToolsInScope(state).map((tool) => tool.name);
  const where = state.active ? `while skill ${state.active.name} is active` : 'before a skill is loaded';
  const has = granted.length > 0 ? `the tools granted now are ${granted.join(', ')}` : "no tools are granted now beyond the engine's own";
  return `Tool ${name} is not available ${where}: ${has}. Use only the tools you were given.`;
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
