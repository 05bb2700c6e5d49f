import { cancelledGuidance, emptyRecoveryAnswer, roundBudgetGuidance } from '../guidance';
import { cancelledEnding, completedEnding, failedEnding } from '../run/endings';
import { formatDuration } from '../skills/durations';
import { isUnfinished, remainingSteps } from './plan';
import type { ActivePlan, End, PolicyState } from './types';

/** How a turn (or a skill run) ends when the policy ends it, with the words an operator reads. */

const remaining = (plan: ActivePlan | null) => (plan ? remainingSteps(plan).join(' → ') : '');

/** What was stopped: the turn, or a skill run (whose plan is not carried anywhere). */
const stopped = (state: Pick<PolicyState, 'depth'>) =>
  state.depth > 0 ? 'the skill run was stopped' : 'the turn was stopped';

/** What the model kept doing: breaking the active plan, or breaking the run's rules. */
function violated(state: PolicyState): string {
  const { plan } = state;
  if (plan) return `broke the plan of skill ${plan.skill} at ${plan.current ? `step ${plan.current}` : 'its start'}`;
  const run = state.depth > 0 ? state.given : null;
  return run ? `broke the rules of skill run ${run.skill}` : 'broke the rules of this turn';
}

export function planViolationsEnd(state: PolicyState): End {
  const { plan } = state;
  const message = `The model ${violated(state)} ${state.violations} times; ${stopped(state)}. Remaining: ${remaining(plan) || 'none'}.`;
  return { kind: 'end', ending: failedEnding('plan_violations', message) };
}

export function roundBudgetEnd(state: PolicyState, plan: ActivePlan | null): End {
  if (!plan) {
    return {
      kind: 'end',
      ending: completedEnding('max_rounds'),
      lastWord: {
        guidance: roundBudgetGuidance,
        purpose: 'final answer without tools',
        fallback: emptyRecoveryAnswer,
        compact: true,
      },
    };
  }
  const kept = state.depth > 0 ? '; the skill run was stopped' : "; the plan is kept for the session's next turn";
  const message = `The round budget ran out in skill ${plan.skill}${kept}. Remaining: ${remaining(plan)}.`;
  return { kind: 'end', ending: failedEnding('max_rounds', message) };
}

/** A turn's unfinished plan is kept for the session's next turn (a skill run's is not carried anywhere). */
const keptPlan = (state: PolicyState): string =>
  state.depth === 0 && isUnfinished(state.plan)
    ? ` The plan is kept for the session's next turn. Remaining: ${remaining(state.plan)}.`
    : '';

const tokenBudgetError = (message: string): End => ({ kind: 'end', ending: failedEnding('token_budget', message) });

/** The run's tokens (its skill runs' included) reached what it was given of its user's daily budget: no more model calls. */
export function tokenBudgetEnd(state: PolicyState, tokens: number, budget: number): End {
  const [run, given] = state.depth > 0 ? ['skill run', 'its invoker had left of'] : ['turn', 'left of'];
  const message =
    `The ${run} used ${tokens.toLocaleString('en-US')} model tokens, reaching the ${budget.toLocaleString('en-US')} ${given} the ` +
    `user's daily budget when it started (SKILLFLOW_USER_DAILY_TOKENS); it was stopped before its next model call. The budget renews at 00:00 UTC.${keptPlan(state)}`;
  return tokenBudgetError(message);
}

/** The user's day ledger had nothing left for the run's next round: turns running at once used up the daily budget. */
export function sharedBudgetEnd(state: PolicyState): End {
  const message =
    `The user's daily token budget (SKILLFLOW_USER_DAILY_TOKENS) is used up, by this ${state.depth > 0 ? 'skill run' : 'turn'} and the user's ` +
    `other turns running at the same time; ${stopped(state)} before its next model call. The budget renews at 00:00 UTC.${keptPlan(state)}`;
  return tokenBudgetError(message);
}

export type SkillLimitHit = { limit: 'max-iterations'; rounds: number } | { limit: 'timeout'; ms: number };

export function skillLimitEnd(skill: string, hit: SkillLimitHit, state: Pick<PolicyState, 'plan' | 'depth'>): End {
  const what =
    hit.limit === 'max-iterations'
      ? `its limit of ${hit.rounds} model rounds (limits.max-iterations: ${hit.rounds})`
      : `its limit of ${formatDuration(hit.ms)} of active time (limits.timeout: ${formatDuration(hit.ms)}; time waiting for a human does not count)`;
  const { plan } = state;
  const kept =
    plan && state.depth === 0
      ? ` The plan is kept for the session's next turn. Remaining: ${remaining(plan) || 'nothing'}.`
      : '';
  const message = `Skill ${skill} reached ${what}; ${stopped(state)}.${kept}`;
  return { kind: 'end', ending: failedEnding('skill_limit', message) };
}

export const cancelledByUserEnd: End = {
  kind: 'end',
  ending: cancelledEnding('cancelled_by_user'),
  lastWord: { guidance: cancelledGuidance, purpose: 'explain the cancellation' },
};

export function expiredEnd(checkpoint: string): End {
  return {
    kind: 'end',
    ending: cancelledEnding('expired', `Checkpoint ${checkpoint} expired before anyone answered.`),
    result: { expired: true },
  };
}

/** A skill's declared output still missing or invalid after its one correction. */
export function invalidOutputEnd(
  state: Pick<PolicyState, 'depth'>,
  skill: string,
  problem: string,
  output?: string,
): End {
  const message = `Skill ${skill} declares a structured output, and ${problem} after one correction; ${stopped(state)}.`;
  return { kind: 'end', ending: failedEnding('invalid_output', message, output) };
}
