import type { CheckpointDecision } from '../checkpoints';
import type { PlanSymbol } from '../skills/plan-ast';
import { advancePlan, allowedNext, compilePlan, isAllowed, jumpToStep, startPlan } from '../skills/plan-automaton';
import type { CheckpointSpec, SkillManifest } from '../skills/types';
import type { ActivePlan, Route } from './types';

/** A skill's plan, pure: where it stands, what it allows, and how it moves. The reducer's handlers use these. */

function describeSymbol(symbol: PlanSymbol, skill: string): string {
  return symbol.kind === 'checkpoint'
    ? `checkpoint ${symbol.name} (request_human_approval with checkpoint "${symbol.name}")`
    : `step ${symbol.name} (load_subskill with skill "${skill}" and subskill "${symbol.name}")`;
}

/** What the plan allows now, less the steps that have used up their runs. */
export function allowedNow(plan: ActivePlan): PlanSymbol[] {
  return allowedNext(plan.automaton, plan.position).filter(
    (symbol) =>
      symbol.kind === 'checkpoint' ||
      plan.stepLimits[symbol.name] === undefined ||
      (plan.stepRuns[symbol.name] ?? 0) < plan.stepLimits[symbol.name],
  );
}

export function describeAllowed(plan: ActivePlan): string {
  const next = allowedNow(plan).map((symbol) => describeSymbol(symbol, plan.skill));
  if (plan.position.complete) next.push('the final answer (the plan is complete)');
  return next.length > 0 ? next.join('; or ') : 'nothing: the plan is complete';
}

/** The shortest sequence of steps and checkpoints that completes the plan from where it stands. */
export function remainingSteps(plan: ActivePlan): string[] {
  if (plan.position.complete) return [];
  const { automaton } = plan;
  const label = (p: number) =>
    automaton.symbols[p].kind === 'checkpoint' ? `checkpoint:${automaton.symbols[p].name}` : automaton.symbols[p].name;
  const previous = new Map<number, number | null>();
  const queue: number[] = [];
  for (const p of plan.position.next) {
    previous.set(p, null);
    queue.push(p);
  }
  while (queue.length > 0) {
    const p = queue.shift() as number;
    if (automaton.last.includes(p)) {
      const path: string[] = [];
      for (let at: number | null = p; at !== null; at = previous.get(at) ?? null) path.unshift(label(at));
      return path;
    }
    for (const next of automaton.follow[p]) {
      if (!previous.has(next)) {
        previous.set(next, p);
        queue.push(next);
      }
    }
  }
  return [];
}

export const isUnfinished = (plan: ActivePlan | null): plan is ActivePlan => plan !== null && !plan.position.complete;

export function startSkillPlan(manifest: SkillManifest, nowMs: number): ActivePlan | null {
  if (!manifest.plan) return null;
  const automaton = compilePlan(manifest.plan.root);
  const fixed = manifest.deadlines.find((d) => d.source.kind === 'fixed');
  return {
    skill: manifest.name,
    automaton,
    position: startPlan(automaton),
    current: null,
    stepRuns: {},
    stepLimits: Object.fromEntries(manifest.stepLimits.map((limit) => [limit.step, limit.maxRuns])),
    checkpoints: manifest.checkpoints,
    deadlines: manifest.deadlines,
    deadline: fixed?.source.kind === 'fixed' ? { atMs: nowMs + fixed.source.ms, jumpTo: fixed.jumpTo } : null,
    deadlinePassed: false,
  };
}

export const hasStep = (plan: ActivePlan, name: string) =>
  plan.automaton.symbols.some((s) => s.kind === 'step' && s.name === name);
export const namesCheckpoint = (plan: ActivePlan | null, name: string) =>
  plan !== null && plan.automaton.symbols.some((s) => s.kind === 'checkpoint' && s.name === name);
export const checkpointSpec = (plan: ActivePlan | null, name: string): CheckpointSpec | undefined =>
  plan?.checkpoints.find((c) => c.name === name);

/** Why the plan refuses this step now, or null when it allows it (steps the plan does not name are always allowed). */
export function stepRefusal(plan: ActivePlan, subskill: string): string | null {
  if (!hasStep(plan, subskill)) return null;
  if (!isAllowed(plan.automaton, plan.position, { kind: 'step', name: subskill })) {
    const why = plan.deadlinePassed ? ' The time limit has passed, so the plan has moved on.' : '';
    return `Not allowed now: step ${subskill} of ${plan.skill}.${why} Allowed next: ${describeAllowed(plan)}.`;
  }
  const limit = plan.stepLimits[subskill];
  if (limit !== undefined && (plan.stepRuns[subskill] ?? 0) >= limit) {
    return `Step ${subskill} of ${plan.skill} has run its limit of ${limit} times in this plan. Allowed next: ${describeAllowed(plan)}.`;
  }
  return null;
}

export function takeStep(plan: ActivePlan, subskill: string): ActivePlan {
  const position = advancePlan(plan.automaton, plan.position, { kind: 'step', name: subskill });
  if (!position) return plan;
  return {
    ...plan,
    position,
    current: subskill,
    stepRuns: { ...plan.stepRuns, [subskill]: (plan.stepRuns[subskill] ?? 0) + 1 },
  };
}

/** Named checkpoints come in plan order; checkpoints the plan does not name are free, unless the deadline has passed. */
export function checkpointRefusal(plan: ActivePlan, name: string): string | null {
  if (!namesCheckpoint(plan, name)) {
    return plan.deadlinePassed && !plan.position.complete
      ? `The time limit of ${plan.skill} has passed: ask nothing more. Allowed next: ${describeAllowed(plan)}.`
      : null;
  }
  if (!isAllowed(plan.automaton, plan.position, { kind: 'checkpoint', name })) {
    return `Not allowed now: checkpoint ${name} of ${plan.skill}. Allowed next: ${describeAllowed(plan)}.`;
  }
  return null;
}

const unitMs = { seconds: 1_000, minutes: 60_000, hours: 3_600_000 } as const;

/**
 * A named checkpoint resolved by a human (or by its expiry policy): the steps after it open, a deadline drawn from its
 * effective params starts, and a routing choice gates the next skill. (A cancel ends the plan: the caller's job.)
 */
export function passCheckpoint(
  plan: ActivePlan,
  name: string,
  decision: Pick<CheckpointDecision, 'action' | 'choice'> | 'expired',
  effective: Record<string, unknown>,
  nowMs: number,
): { plan: ActivePlan; route?: Route } {
  const position = advancePlan(plan.automaton, plan.position, { kind: 'checkpoint', name });
  if (!position) return { plan };
  let next: ActivePlan = { ...plan, position, current: `checkpoint:${name}` };
  for (const deadline of plan.deadlines) {
    const source = deadline.source;
    if (source.kind !== 'param' || source.checkpoint !== name || typeof effective[source.param] !== 'number') continue;
    const ms = (effective[source.param] as number) * unitMs[source.unit];
    next = { ...next, deadline: { atMs: nowMs + ms, jumpTo: deadline.jumpTo }, deadlinePassed: false };
  }
  const routes = checkpointSpec(plan, name)?.routes ?? [];
  if (routes.length === 0) return { plan: next };
  const chosen =
    decision !== 'expired' && decision.action === 'choose'
      ? routes.find((r) => r.label === decision.choice)
      : undefined;
  return { plan: next, route: { skill: chosen ? chosen.skill : null, from: name } };
}

/** When the deadline has passed: the plan jumps to its declared phase, and the message tells the model so. */
export function passDeadline(plan: ActivePlan, nowMs: number): { plan: ActivePlan; message?: string } {
  if (!plan.deadline || plan.deadlinePassed || nowMs < plan.deadline.atMs) return { plan };
  const position = jumpToStep(plan.automaton, plan.deadline.jumpTo);
  if (!position) return { plan };
  return {
    plan: { ...plan, position, deadlinePassed: true },
    message: `The time limit of ${plan.skill} has passed. Ask no more questions; go straight to step ${plan.deadline.jumpTo} (load_subskill with skill "${plan.skill}" and subskill "${plan.deadline.jumpTo}").`,
  };
}

/** Where the plan stands, for a model resuming it in a later turn. */
export function resumeNote(plan: ActivePlan): string {
  return (
    `You are in the middle of skill ${plan.skill}` +
    (plan.current ? `; the last step done was ${plan.current}` : '') +
    `. Remaining: ${remainingSteps(plan).join(' → ') || 'nothing'}. Allowed next: ${describeAllowed(plan)}. ` +
    `Load the skill again with load_skill to read its instructions, then continue from there.`
  );
}

/**
 * Per-step limits are enforced when the step is requested; the model is told where it stands in the instructions of
 * a step just taken.
 */
export function stepLimitNote(plan: ActivePlan, subskill: string): string | undefined {
  const limit = plan.stepLimits[subskill];
  if (limit === undefined) return undefined;
  const runs = plan.stepRuns[subskill];
  return `Step limit: ${subskill} may run at most ${limit} times in this plan; this is run ${runs}, ${limit - runs} left.`;
}
