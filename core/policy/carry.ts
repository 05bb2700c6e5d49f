import { isPlainObject } from '../json-validator';
import { emptySkillTurnState, pinSkill, type SkillTurnState } from '../skills/tool-results';
import type { SkillRef, SkillSnapshot } from '../skills/types';
import { isUnfinished } from './plan';
import type { PlanCarry, PolicyState } from './types';

/**
 * What a turn hands its session for the next turn: an unfinished plan with a reference to the pinned skill it needs,
 * and a routing choice of a skill that was not acted on.
 */
export function carryOf(state: PolicyState, pinned: Record<string, SkillSnapshot>): PlanCarry | undefined {
  const plan = isUnfinished(state.plan) ? state.plan : null;
  const route = state.route?.skill ? state.route : null;
  if (!plan && !route) return undefined;
  const snapshot = plan ? pinned[plan.skill] : undefined;
  return {
    version: 3,
    plan,
    route,
    skills: snapshot ? [{ name: snapshot.name, hash: snapshot.hash }] : [],
    snapshots: [],
  };
}

/**
 * A carry as the current code reads it from a session's input or a turn's: version 3 (what this code and the legacy
 * code hand on), its fields only; undefined for nothing, or for a shape it does not know.
 */
export function readPlanCarry(value: unknown): PlanCarry | undefined {
  if (!isPlainObject(value) || value.version !== 3) return undefined;
  const { plan, route, skills, snapshots } = value as unknown as PlanCarry;
  return { version: 3, plan, route, skills: skills ?? [], snapshots: snapshots ?? [] };
}

/** The carried skills a turn must read back before it continues the plan: those it does not hold whole. */
export function unresolvedSkills(carry: PlanCarry | undefined): SkillRef[] {
  if (!carry) return [];
  return carry.skills.filter(
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
