import { closest } from '../skills/problems';
import { engineToolNames, skillRunToolNames } from '../skills/tool-names';
import { grantedTools } from '../tools/grants';
import type { ToolHeader, ToolSpec } from '../tools/types';
import { describeAllowed, isUnfinished } from './plan';
import type { PolicyState } from './types';

/**
 * What the model may call now, as functions of the policy state: the tools, the skills it may load, and the skills it
 * may invoke (a skill run's children, within the depth cap). The registered tools in scope are a function of the active
 * skill alone, so a skill run, whose policy starts with its skill active, gets its skill's tools for its whole run.
 */

/** Whether this run may invoke skills at all: a turn, or a skill run with children above the depth cap. */
export function mayInvoke(state: PolicyState): boolean {
  return state.depth < state.settings.maxSkillDepth && (state.children === null || state.children.length > 0);
}

/** The engine's tools this run has: all of them in a turn; in a skill run, those a skill run has. */
export function engineToolsInScope(state: PolicyState): readonly string[] {
  return state.children === null ? engineToolNames : skillRunToolNames(mayInvoke(state));
}

/** The grants in force: the active skill's (none when it declares none), or the root turn's configured default. */
export function grantsInForce(state: PolicyState): readonly string[] {
  return state.active ? state.active.grants : state.rootGrants;
}

/** The registered tools of the run's catalog: their headers when it read it by reference, else their specs. */
export function catalogTools(state: PolicyState): ReadonlyArray<ToolSpec | ToolHeader> {
  return state.headers ?? state.tools;
}

/** The names of the registered tools granted now, in the registry's order. */
export function grantedToolNames(state: PolicyState): string[] {
  return grantedTools(catalogTools(state), grantsInForce(state)).map((tool) => tool.name);
}

/** The registered tools the model may call now, in the registry's order: those whose detail the run holds. */
export function registeredToolsInScope(state: PolicyState): ToolSpec[] {
  if (!state.headers) return grantedTools(state.tools, grantsInForce(state));
  const held = new Map(state.tools.map((spec) => [spec.name, spec]));
  return grantedToolNames(state).flatMap((name) => held.get(name) ?? []);
}

/** The tools granted now whose detail the run has yet to read (only a run that read its catalog by reference has any). */
export function undetailedToolsInScope(state: PolicyState): ToolHeader[] {
  if (!state.headers) return [];
  const held = new Set(state.tools.map((spec) => spec.name));
  return grantedTools(state.headers, grantsInForce(state)).filter((header) => !held.has(header.name));
}

/** The tools the model may call now: the engine's own (section above), then the registered tools granted now. */
export function toolsInScope(state: PolicyState): readonly string[] {
  return [...engineToolsInScope(state), ...grantedToolNames(state)];
}

/** Why a registered tool is not in scope now, in words for the model. */
export function toolScopeRefusal(state: PolicyState, name: string): string {
  const granted = grantedToolNames(state);
  const where = state.active ? `while skill ${state.active.name} is active` : 'before a skill is loaded';
  const has =
    granted.length > 0
      ? `the tools granted now are ${granted.join(', ')}`
      : "no tools are granted now beyond the engine's own";
  return `Tool ${name} is not available ${where}: ${has}. Use only the tools you were given.`;
}

/** Why the model may not load this skill now, or null: a routing choice allows exactly the chosen skill; an unfinished plan, none. */
export function loadRefusal(state: PolicyState, name: string): string | null {
  const { route, plan } = state;
  if (state.children !== null) {
    return `A skill run follows its own skill only and loads no other; ${state.children.length > 0 ? `invoke one of its children (${state.children.join(', ')}) with invoke_skill` : 'it invokes no other skills'}.`;
  }
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

/** Why the model may not invoke this skill now (and whether that counts as a plan violation), or null. */
export function invokeRefusal(state: PolicyState, name: string): { message: string; violation: boolean } | null {
  if (!state.catalog.includes(name)) {
    const near = closest(name, state.catalog);
    return {
      message: `No skill named "${name}".${near ? ` Did you mean "${near}"?` : ''} Known skills: ${state.catalog.join(', ') || 'none'}.`,
      violation: false,
    };
  }
  const depth = state.depth + 1;
  if (depth > state.settings.maxSkillDepth) {
    return {
      message: `Skill runs nest at most ${state.settings.maxSkillDepth} deep (SKILLFLOW_MAX_SKILL_DEPTH); invoking ${name} here would run it at depth ${depth}.`,
      violation: true,
    };
  }
  if (state.children !== null) {
    if (state.children.includes(name)) return null;
    const skill = state.active!.name;
    const message =
      state.children.length > 0
        ? `Skill ${skill} may invoke only its children (${state.children.join(', ')}); ${name} is not one of them.`
        : `Skill ${skill} invokes no other skills.`;
    return { message, violation: true };
  }
  // A turn may invoke any skill, except while a plan is in progress or a routing choice stands: then its skill's children.
  const { plan, route } = state;
  if (!isUnfinished(plan) && !route) return null;
  const children = state.active?.children ?? [];
  if (children.includes(name)) return null;
  const why = isUnfinished(plan)
    ? `Skill ${plan.skill} is in progress and its plan is not complete (allowed next: ${describeAllowed(plan)})`
    : `At ${route!.from} the human chose ${route!.skill ?? 'to stop'}`;
  return {
    message: `${why}, so ${children.length > 0 ? `only its children (${children.join(', ')}) may` : 'no skill may'} be invoked now.`,
    violation: true,
  };
}
