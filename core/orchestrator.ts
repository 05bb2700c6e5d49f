import type { CheckpointDecision } from './checkpoints';
import type { PlanSymbol } from './skills/plan-ast';
import { advancePlan, allowedNext, compilePlan, isAllowed, jumpToStep, startPlan, type PlanAutomaton, type PlanState } from './skills/plan-automaton';
import type { CheckpointSpec, DeadlineSpec, SkillManifest } from './skills/types';

/**
 * The step orchestrator: a skill's declared plan as a state machine the model cannot talk its way around. Pure and
 * plain JSON, so the turn workflow keeps it in its state and the session carries it into the next turn.
 */
export interface ActivePlan {
  skill: string;
  automaton: PlanAutomaton;
  position: PlanState;
  /** The step or checkpoint taken last; null before the first. */
  current: string | null;
  stepRuns: Record<string, number>;
  stepLimits: Record<string, number>;
  checkpoints: CheckpointSpec[];
  deadlines: DeadlineSpec[];
  /** Epoch ms at which the plan jumps, and where to; set when the deadline's source checkpoint is resolved. */
  deadline: { atMs: number; jumpTo: string } | null;
  deadlinePassed: boolean;
}

export interface OrchestratorState {
  plan: ActivePlan | null;
  /** After a routing checkpoint: the skill the human chose (null: stop, only the final answer is allowed). */
  route: { skill: string | null; from: string } | null;
  violations: number;
}

export const emptyOrchestrator = (): OrchestratorState => ({ plan: null, route: null, violations: 0 });

export type Verdict = { ok: true } | { ok: false; message: string };
const ok: Verdict = { ok: true };

function describe(symbol: PlanSymbol, skill: string): string {
  return symbol.kind === 'checkpoint'
    ? `checkpoint ${symbol.name} (request_human_approval with checkpoint "${symbol.name}")`
    : `step ${symbol.name} (load_subskill with skill "${skill}" and subskill "${symbol.name}")`;
}

/** What the plan allows now, less the steps that have used up their runs. */
export function allowedNow(plan: ActivePlan): PlanSymbol[] {
  return allowedNext(plan.automaton, plan.position).filter(
    (symbol) => symbol.kind === 'checkpoint' || plan.stepLimits[symbol.name] === undefined || (plan.stepRuns[symbol.name] ?? 0) < plan.stepLimits[symbol.name],
  );
}

export function describeAllowed(plan: ActivePlan): string {
  const next = allowedNow(plan).map((symbol) => describe(symbol, plan.skill));
  if (plan.position.complete) next.push('the final answer (the plan is complete)');
  return next.length > 0 ? next.join('; or ') : 'nothing: the plan is complete';
}

/** The shortest sequence of steps and checkpoints that completes the plan from where it stands. */
export function remainingSteps(plan: ActivePlan): string[] {
  if (plan.position.complete) return [];
  const { automaton } = plan;
  const label = (p: number) => (automaton.symbols[p].kind === 'checkpoint' ? `checkpoint:${automaton.symbols[p].name}` : automaton.symbols[p].name);
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

export function startSkillPlan(manifest: SkillManifest): ActivePlan | null {
  if (!manifest.plan) return null;
  const automaton = compilePlan(manifest.plan.root);
  return {
    skill: manifest.name,
    automaton,
    position: startPlan(automaton),
    current: null,
    stepRuns: {},
    stepLimits: Object.fromEntries(manifest.stepLimits.map((limit) => [limit.step, limit.maxRuns])),
    checkpoints: manifest.checkpoints,
    deadlines: manifest.deadlines,
    deadline: null,
    deadlinePassed: false,
  };
}

/** May the model load this skill now? A routing choice allows exactly the chosen skill; an unfinished plan, none. */
export function checkLoadSkill(state: OrchestratorState, name: string): Verdict {
  if (state.route) {
    if (state.route.skill === name) return ok;
    return {
      ok: false,
      message: state.route.skill
        ? `The human chose ${state.route.skill} at ${state.route.from}; only that skill may be loaded now.`
        : `The human chose to stop at ${state.route.from}; give your final answer now without loading another skill.`,
    };
  }
  const plan = state.plan;
  if (plan && plan.skill !== name && !plan.position.complete) {
    return { ok: false, message: `Skill ${plan.skill} is in progress and its plan is not complete. Allowed next: ${describeAllowed(plan)}.` };
  }
  return ok;
}

/** Records a loaded skill: its plan starts (a reload of the skill in progress keeps its position). */
export function onSkillLoaded(state: OrchestratorState, manifest: SkillManifest): OrchestratorState {
  if (state.plan?.skill === manifest.name && !state.plan.position.complete) return { ...state, route: null };
  return { ...state, plan: startSkillPlan(manifest), route: null };
}

export function checkSubskill(state: OrchestratorState, skill: string, subskill: string): Verdict {
  const plan = state.plan;
  if (!plan || plan.skill !== skill) return ok;
  if (!plan.automaton.symbols.some((s) => s.kind === 'step' && s.name === subskill)) return ok;
  const symbol: PlanSymbol = { kind: 'step', name: subskill };
  if (!isAllowed(plan.automaton, plan.position, symbol)) {
    const why = plan.deadlinePassed ? ' The time limit has passed, so the plan has moved on.' : '';
    return { ok: false, message: `Not allowed now: step ${subskill} of ${skill}.${why} Allowed next: ${describeAllowed(plan)}.` };
  }
  const limit = plan.stepLimits[subskill];
  if (limit !== undefined && (plan.stepRuns[subskill] ?? 0) >= limit) {
    return { ok: false, message: `Step ${subskill} of ${skill} has run its limit of ${limit} times in this plan. Allowed next: ${describeAllowed(plan)}.` };
  }
  return ok;
}

export function onSubskillLoaded(state: OrchestratorState, skill: string, subskill: string): OrchestratorState {
  const plan = state.plan;
  if (!plan || plan.skill !== skill) return state;
  const position = advancePlan(plan.automaton, plan.position, { kind: 'step', name: subskill });
  if (!position) return state;
  return { ...state, plan: { ...plan, position, current: subskill, stepRuns: { ...plan.stepRuns, [subskill]: (plan.stepRuns[subskill] ?? 0) + 1 } } };
}

export function namedCheckpoint(plan: ActivePlan | null, name: string): boolean {
  return plan !== null && plan.automaton.symbols.some((s) => s.kind === 'checkpoint' && s.name === name);
}

/** Named checkpoints come in plan order; checkpoints the plan does not name are free, unless the deadline has passed. */
export function checkCheckpoint(state: OrchestratorState, name: string): Verdict {
  const plan = state.plan;
  if (!plan) return ok;
  if (!namedCheckpoint(plan, name)) {
    if (plan.deadlinePassed && !plan.position.complete) {
      return { ok: false, message: `The time limit of ${plan.skill} has passed: ask nothing more. Allowed next: ${describeAllowed(plan)}.` };
    }
    return ok;
  }
  if (!isAllowed(plan.automaton, plan.position, { kind: 'checkpoint', name })) {
    return { ok: false, message: `Not allowed now: checkpoint ${name} of ${plan.skill}. Allowed next: ${describeAllowed(plan)}.` };
  }
  return ok;
}

export function checkpointSpec(plan: ActivePlan | null, name: string): CheckpointSpec | undefined {
  return plan?.checkpoints.find((checkpoint) => checkpoint.name === name);
}

/**
 * A named checkpoint resolved by a human (or by its expiry policy): the steps after it open, a deadline drawn from its
 * params starts, and a routing choice gates the next skill. A cancel ends the plan.
 */
export function onCheckpointResolved(
  state: OrchestratorState,
  name: string,
  decision: Pick<CheckpointDecision, 'action' | 'choice' | 'overrides'> | 'expired',
  params: Record<string, unknown> | null,
  nowMs: number,
): OrchestratorState {
  const plan = state.plan;
  if (!plan || !namedCheckpoint(plan, name)) return state;
  if (decision !== 'expired' && decision.action === 'cancel') return { ...state, plan: null, route: null };
  const position = advancePlan(plan.automaton, plan.position, { kind: 'checkpoint', name });
  if (!position) return state;
  let next: ActivePlan = { ...plan, position, current: `checkpoint:${name}` };
  const effective = { ...(params ?? {}), ...(decision !== 'expired' ? (decision.overrides ?? {}) : {}) };
  for (const deadline of plan.deadlines) {
    const source = deadline.source;
    const ms =
      source.kind === 'fixed'
        ? null
        : source.checkpoint === name && typeof effective[source.param] === 'number'
          ? (effective[source.param] as number) * { seconds: 1_000, minutes: 60_000, hours: 3_600_000 }[source.unit]
          : null;
    if (ms !== null) next = { ...next, deadline: { atMs: nowMs + ms, jumpTo: deadline.jumpTo }, deadlinePassed: false };
  }
  let route = state.route;
  const spec = checkpointSpec(plan, name);
  if (spec && spec.routes.length > 0) {
    const chosen = decision !== 'expired' && decision.action === 'choose' ? spec.routes.find((r) => r.label === decision.choice) : undefined;
    route = { skill: chosen ? chosen.skill : null, from: name };
  }
  return { ...state, plan: next, route };
}

/** Starts fixed deadlines when the skill is loaded. */
export function startFixedDeadlines(state: OrchestratorState, nowMs: number): OrchestratorState {
  const plan = state.plan;
  if (!plan || plan.deadline) return state;
  const fixed = plan.deadlines.find((d) => d.source.kind === 'fixed');
  if (!fixed || fixed.source.kind !== 'fixed') return state;
  return { ...state, plan: { ...plan, deadline: { atMs: nowMs + fixed.source.ms, jumpTo: fixed.jumpTo } } };
}

/** When the deadline has passed: the plan jumps to its declared phase, and the message tells the model so. */
export function applyDeadline(state: OrchestratorState, nowMs: number): { state: OrchestratorState; message?: string } {
  const plan = state.plan;
  if (!plan || !plan.deadline || plan.deadlinePassed || nowMs < plan.deadline.atMs) return { state };
  const position = jumpToStep(plan.automaton, plan.deadline.jumpTo);
  if (!position) return { state };
  const next = { ...state, plan: { ...plan, position, deadlinePassed: true } };
  return {
    state: next,
    message: `The time limit of ${plan.skill} has passed. Ask no more questions; go straight to step ${plan.deadline.jumpTo} (load_subskill with skill "${plan.skill}" and subskill "${plan.deadline.jumpTo}").`,
  };
}

/** May the model give its final answer? Not while a plan is incomplete. */
export function checkFinal(state: OrchestratorState): Verdict {
  const plan = state.plan;
  if (!plan || plan.position.complete) return ok;
  return {
    ok: false,
    message:
      `Your answer cannot be accepted yet: the plan of skill ${plan.skill} is not complete. ` +
      `Remaining: ${remainingSteps(plan).join(' → ')}. Allowed next: ${describeAllowed(plan)}. Continue with the plan.`,
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
