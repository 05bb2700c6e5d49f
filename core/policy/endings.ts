import { cancelledGuidance, emptyRecoveryAnswer, roundBudgetGuidance } from '../guidance';
import { formatDuration } from '../skills/durations';
import { remainingSteps } from './plan';
import type { ActivePlan, End, PolicyState } from './types';

/** How a turn ends when the policy ends it, with the words an operator reads. */

const remaining = (plan: ActivePlan | null) => (plan ? remainingSteps(plan).join(' → ') : '');

export function planViolationsEnd(state: PolicyState): End {
  const { plan } = state;
  const where = plan ? `skill ${plan.skill} at ${plan.current ? `step ${plan.current}` : 'its start'}` : 'the routing decision';
  const message = `The model broke the plan of ${where} ${state.violations} times; the turn was stopped. Remaining: ${remaining(plan) || 'none'}.`;
  return { kind: 'end', ending: { status: 'failed', reason: 'plan_violations', error: { code: 'plan_violations', message } } };
}

export function roundBudgetEnd(plan: ActivePlan | null): End {
  if (!plan) {
    return { kind: 'end', ending: { status: 'completed', reason: 'max_rounds' }, lastWord: { guidance: roundBudgetGuidance, purpose: 'final answer without tools', fallback: emptyRecoveryAnswer, compact: true } };
  }
  const message = `The round budget ran out in skill ${plan.skill}; the plan is kept for the session's next turn. Remaining: ${remaining(plan)}.`;
  return { kind: 'end', ending: { status: 'failed', reason: 'max_rounds', error: { code: 'max_rounds', message } } };
}

export type SkillLimitHit = { limit: 'max-iterations'; rounds: number } | { limit: 'timeout'; ms: number };

export function skillLimitEnd(skill: string, hit: SkillLimitHit, plan: ActivePlan | null): End {
  const what =
    hit.limit === 'max-iterations'
      ? `its limit of ${hit.rounds} model rounds (limits.max-iterations: ${hit.rounds})`
      : `its limit of ${formatDuration(hit.ms)} of active time (limits.timeout: ${formatDuration(hit.ms)}; time waiting for a human does not count)`;
  const kept = plan ? ` The plan is kept for the session's next turn. Remaining: ${remaining(plan) || 'nothing'}.` : '';
  const message = `Skill ${skill} reached ${what}; the turn was stopped.${kept}`;
  return { kind: 'end', ending: { status: 'failed', reason: 'skill_limit', error: { code: 'skill_limit', message } } };
}

export const cancelledByUserEnd: End = {
  kind: 'end',
  ending: { status: 'cancelled', reason: 'cancelled_by_user' },
  lastWord: { guidance: cancelledGuidance, purpose: 'explain the cancellation' },
};

export function expiredEnd(checkpoint: string): End {
  return { kind: 'end', ending: { status: 'cancelled', reason: 'expired', output: `Checkpoint ${checkpoint} expired before anyone answered.` }, result: { expired: true } };
}
