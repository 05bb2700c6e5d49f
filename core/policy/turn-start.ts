import { activate } from './clock';
import { isUnfinished, resumeNote, startSkillPlan } from './plan';
import type { PolicyEvent, PolicyState, Reduction } from './types';
import { newPolicyState } from './state';
import { allow } from './verdicts';
import { isCatalogReference } from '../tools/details';
import type { ToolCatalog, ToolCatalogReference, ToolSpec } from '../tools/types';

type TurnStarted = Extract<PolicyEvent, { type: 'turn.started' }>;

/**
 * A turn starts with its settings, the catalog, and what the session's previous turn carried:
 * an unfinished plan resumes (its skill active from now), and a routing choice is passed on. A skill run starts with
 * its skill active and its plan at the start, its children as what it may invoke, and its parameters given. A run
 * may make the invoke_skill calls its invoker left it (a turn: the per-turn cap).
 */
export function onTurnStarted(event: TurnStarted): Reduction {
  const { settings, catalog, carry, at, tools, invocation } = event;
  let state: PolicyState = {
    ...newPolicyState(),
    settings,
    catalog,
    ...(tools ? catalogState(tools) : {}),
    given: event.given ?? null,
    tokenBudget: event.tokenBudget ?? null,
    invocations: { left: invocation?.invocationsLeft ?? settings.maxInvocationsPerTurn, inResponse: 0 },
  };
  if (invocation) {
    const { manifest, depth, checkpointBase, params } = invocation;
    const run = {
      ...state,
      depth,
      children: manifest.children,
      checkpointCount: checkpointBase,
      given: { skill: manifest.name, params },
      plan: startSkillPlan(manifest, at),
    };
    return allow(activate(run, manifest, at));
  }
  if (!carry) return allow(state);
  const notes: string[] = [];
  const plan = isUnfinished(carry.plan) ? carry.plan : null;
  if (plan) {
    state = { ...state, plan };
    const snapshot = carry.snapshots.find((candidate) => candidate.name === plan.skill);
    if (snapshot) state = activate(state, snapshot.manifest, at);
    notes.push(resumeNote(plan));
  }
  const { route } = carry;
  if (route?.skill) {
    notes.push(
      `In the previous turn, at ${route.from}, the human chose ${route.skill} as the next skill and it was not loaded yet. ` +
        `If the user's message goes on from there, load it with load_skill; otherwise follow the new request.`,
    );
  }
  return allow(state, notes.length > 0 ? { note: notes.join('\n\n') } : {});
}

/** The catalog in the policy's state: the whole specs, or the headers (their detail read once granted). */
function catalogState(
  tools: ToolCatalog | ToolCatalogReference,
): Pick<PolicyState, 'tools' | 'headers' | 'rootGrants'> {
  return isCatalogReference(tools)
    ? { tools: [], headers: tools.headers, rootGrants: tools.rootGrants }
    : { tools: tools.tools, headers: null, rootGrants: tools.rootGrants };
}

/** Adds the specs a run read the detail of (each once, the first read kept). */
export function onToolsDetailed(state: PolicyState, specs: ToolSpec[]): Reduction {
  const added = specs.filter(
    (spec, i) =>
      !state.tools.some((held) => held.name === spec.name) &&
      specs.findIndex((other) => other.name === spec.name) === i,
  );
  return allow(added.length > 0 ? { ...state, tools: [...state.tools, ...added] } : state);
}
