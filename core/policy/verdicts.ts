import type { DecisionProblem } from '../checkpoints';
import { planViolationsEnd } from './endings';
import type { Allow, PolicyState, Reduction, Refuse, RefusalCode } from './types';

export const allow = (state: PolicyState, details: Omit<Allow, 'kind'> = {}): Reduction => ({
  state,
  verdict: { kind: 'allow', ...details },
});

export function refuse(
  state: PolicyState,
  message: string,
  code: RefusalCode = 'refused',
  problems?: DecisionProblem[],
): Reduction {
  const verdict: Refuse = { kind: 'refuse', message, code, ...(problems ? { problems } : {}) };
  return { state, verdict };
}

/** A move the plan does not allow: refused, and counted. At the configured number of violations the turn ends. */
export function violation(state: PolicyState, message: string): Reduction {
  const next = { ...state, violations: state.violations + 1 };
  if (next.violations >= next.settings.maxPlanViolations) return { state: next, verdict: planViolationsEnd(next) };
  return refuse(next, message);
}
