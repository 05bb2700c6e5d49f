import { skillGrants } from '../tools/grants';
import { skillLimitEnd } from './endings';
import type { End, PolicyState, SkillManifestLike, SkillUsage } from './types';

/**
 * Per-skill limits: model rounds while the skill is active, and its active time. The clock of the active skill stops
 * while a human is asked and starts again when the checkpoint is resolved, so human waits never count.
 */

export const usageOf = (state: PolicyState, skill: string): SkillUsage =>
  state.usage[skill] ?? { rounds: 0, activeMs: 0 };

/** Stops the active skill's clock at `at`, adding the time it ran to the skill's usage. */
export function stopClock(state: PolicyState, at: number): PolicyState {
  if (!state.active || state.clockSince === null) return state;
  const usage = usageOf(state, state.active.name);
  return {
    ...state,
    clockSince: null,
    usage: {
      ...state.usage,
      [state.active.name]: { ...usage, activeMs: usage.activeMs + Math.max(0, at - state.clockSince) },
    },
  };
}

export function startClock(state: PolicyState, at: number): PolicyState {
  return state.active ? { ...state, clockSince: at } : state;
}

/** Makes a skill the active one (loaded, or resumed with its plan): the previous one's clock stops, this one's runs. */
export function activate(state: PolicyState, manifest: SkillManifestLike, at: number): PolicyState {
  const stopped = stopClock(state, at);
  const { name, limits, checkpoints, freeCheckpoints } = manifest;
  const active = {
    name,
    limits,
    checkpoints,
    freeCheckpoints,
    grants: skillGrants(manifest),
    output: manifest.output ?? [],
    children: manifest.children ?? [],
  };
  return { ...stopped, active, clockSince: at };
}

/** Counts a model round against the active skill, or ends the turn when the skill has used up a limit. */
export function countRound(state: PolicyState, at: number): { state: PolicyState; end?: End } {
  if (!state.active) return { state };
  const banked = startClock(stopClock(state, at), at);
  const { name, limits } = state.active;
  const usage = usageOf(banked, name);
  if (limits.timeoutMs !== null && usage.activeMs >= limits.timeoutMs) {
    return { state: banked, end: skillLimitEnd(name, { limit: 'timeout', ms: limits.timeoutMs }, banked) };
  }
  if (limits.maxIterations !== null && usage.rounds >= limits.maxIterations) {
    return {
      state: banked,
      end: skillLimitEnd(name, { limit: 'max-iterations', rounds: limits.maxIterations }, banked),
    };
  }
  return { state: { ...banked, usage: { ...banked.usage, [name]: { ...usage, rounds: usage.rounds + 1 } } } };
}
