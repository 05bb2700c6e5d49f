import { countRound } from './clock';
import { roundBudgetEnd, tokenBudgetEnd } from './endings';
import { onFinalWithOutput } from './output';
import { describeAllowed, isUnfinished, passDeadline, remainingSteps } from './plan';
import { newResponse, reserveAskOf } from './spending';
import type { PolicyState, Reduction } from './types';
import { allow, violation } from './verdicts';

/**
 * Before each model call: the token budget, the round budget between two human decisions, the active skill's limits,
 * and the plan's deadline; with spending bounds, the tokens to reserve for it. And the model's final answer, which an
 * unfinished plan refuses and a declared output must go with.
 */
export function onRoundStarting(state: PolicyState, at: number, tokens = 0, estimate = 0): Reduction {
  if (state.tokenBudget !== null && tokens >= state.tokenBudget)
    return { state, verdict: tokenBudgetEnd(state, tokens, state.tokenBudget) };
  if (state.roundsSinceHuman >= state.settings.maxRounds) {
    return { state, verdict: roundBudgetEnd(state, isUnfinished(state.plan) ? state.plan : null) };
  }
  const counted = countRound(state, at);
  if (counted.end) return { state: counted.state, verdict: counted.end };
  const next = {
    ...counted.state,
    roundsSinceHuman: counted.state.roundsSinceHuman + 1,
    invocations: newResponse(counted.state.invocations),
  };
  const reserve = reserveAskOf(next, tokens, estimate);
  const spending = reserve ? { reserve } : {};
  if (!next.plan) return allow(next, spending);
  const passed = passDeadline(next.plan, at);
  return allow({ ...next, plan: passed.plan }, passed.message ? { ...spending, note: passed.message } : spending);
}

export function onFinalProposed(state: PolicyState, text: string): Reduction {
  const { plan } = state;
  if (!isUnfinished(plan)) return onFinalWithOutput(state, text);
  return violation(
    state,
    `Your answer cannot be accepted yet: the plan of skill ${plan.skill} is not complete. ` +
      `Remaining: ${remainingSteps(plan).join(' → ')}. Allowed next: ${describeAllowed(plan)}. Continue with the plan.`,
  );
}
