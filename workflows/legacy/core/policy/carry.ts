import { isPlainObject } from '../json-validator';
import { emptySkillTurnState, pinSkill, type SkillTurnState } from '../skills/tool-results';
import type { SkillRef, SkillSnapshot } from '../skills/types';
import { isUnfinished } from './plan';
import type { ActivePlan, PlanCarry, PolicyState, Route } from './types';

/**
 * What a turn hands its session for the next turn: an unfinished plan with a reference to the pinned skill it needs,
 * and a routing choice that was not acted on. Carries of the code before the policy core ({orchestrator, snapshots}) are migrated
 * when read, wherever one is read (the session's input after continue-as-new, a turn's resume, a turn's result).
 */
export function carryOf(state: PolicyState, pinned: Record<string, SkillSnapshot>): PlanCarry | undefined {
  let plan: ActivePlan | null;
  let route: Route | null;
  if (state.rules.routeScopedToPlan) {
    plan = isUnfinished(state.plan) ? state.plan : null;
    route = state.route?.skill ? state.route : null;
  } else {
    // As the code before the policy core carried it: the plan (finished or not) whenever there is anything to carry.
    route = state.route;
    plan = isUnfinished(state.plan) || route ? state.plan : null;
  }
  if (!plan && !route) return undefined;
  const snapshot = plan ? pinned[plan.skill] : undefined;
  return {
    version: 3,
    plan,
    route,
    skills: snapshot ? [{ name: snapshot.name, hash: snapshot.hash }] : [],
    snapshots: [],
    // Read by workers still running the code before the policy core, during a rolling deploy.
    orchestrator: { plan, route, violations: 0 },
  };
}

/**
 * A carry of any shape skillflow has written, as the current shape; undefined for nothing (or nothing it knows).
 * Whole snapshots of older carries stay, so the turn that reads one needs nothing read back; they are named in
 * `skills` too, and the carry that turn hands on holds only the names.
 */
export function migratePlanCarry(value: unknown): PlanCarry | undefined {
  if (!isPlainObject(value)) return undefined;
  if (value.version === 3) return value as unknown as PlanCarry;
  if (value.version === 2) return withReferences(value as unknown as PlanCarry);
  const orchestrator = value.orchestrator;
  if (!isPlainObject(orchestrator)) return undefined;
  const plan = (orchestrator.plan ?? null) as ActivePlan | null;
  const route = (orchestrator.route ?? null) as Route | null;
  const snapshots = (Array.isArray(value.snapshots) ? value.snapshots : []) as SkillSnapshot[];
  return withReferences({ version: 2, plan, route, snapshots, orchestrator: { plan, route, violations: 0 } });
}

function withReferences(carry: PlanCarry): PlanCarry {
  return { ...carry, version: 3, skills: carry.snapshots.map(({ name, hash }) => ({ name, hash })) };
}

/** The carried skills a turn must read back before it continues the plan: those it does not hold whole. */
export function unresolvedSkills(carry: PlanCarry | undefined): SkillRef[] {
  if (!carry) return [];
  return (carry.skills ?? []).filter(
    (ref) => !carry.snapshots.some((snapshot) => snapshot.name === ref.name && snapshot.hash === ref.hash),
  );
}

/** The carry with the snapshots a turn read back. */
export function withSnapshots(carry: PlanCarry, snapshots: SkillSnapshot[]): PlanCarry {
  return { ...carry, snapshots: [...carry.snapshots, ...snapshots] };
}

/** The skills a carried plan pinned, pinned again for the turn that continues it. */
export function pinnedSkillsOf(carry: PlanCarry | undefined): SkillTurnState {
  return (carry?.snapshots ?? []).reduce(pinSkill, emptySkillTurnState());
}
