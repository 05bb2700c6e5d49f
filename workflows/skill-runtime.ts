import { proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { CheckpointDecision, PendingCheckpoint } from '../core/checkpoints';
import type { ToolUseBlock } from '../core/messages';
import {
  allowedNow,
  applyDeadline,
  checkCheckpoint,
  checkFinal,
  checkLoadSkill,
  checkpointSpec,
  checkSubskill,
  emptyOrchestrator,
  namedCheckpoint,
  onCheckpointResolved,
  onSkillLoaded,
  onSubskillLoaded,
  remainingSteps,
  resumeNote,
  startFixedDeadlines,
  type OrchestratorState,
  type Verdict,
} from '../core/orchestrator';
import {
  emptySkillTurnState,
  nonRetryableSkillErrors,
  pinSkill,
  runSkillTool,
  skillToolDefinitions,
  SkillToolName,
  type SkillManifest,
  type SkillTurnState,
} from '../core/skills';
import type { PlanCarry } from '../core/turn';
import type { LoopGuard } from './agent-loop';
import type { CheckpointPolicy, CheckpointRules } from './checkpoint-desk';
import { searchAttributes } from './search-attributes';
import { toolError, type ToolOutcome, type TurnTool } from './tool-types';
import type { TurnEnding, TurnRun } from './turn-run';

const skillActivities = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 3, nonRetryableErrorTypes: nonRetryableSkillErrors },
});

/** Per-step limits are enforced at dispatch; the model is told where it stands in the step's own instructions. */
function stepLimitNote(state: OrchestratorState, skill: string, subskill: string): string | undefined {
  const plan = state.plan;
  const limit = plan?.skill === skill ? plan.stepLimits[subskill] : undefined;
  if (!plan || limit === undefined) return undefined;
  const runs = plan.stepRuns[subskill] ?? 0;
  return `Step limit: ${subskill} may run at most ${limit} times in this plan; this is run ${runs}, ${limit - runs} left.`;
}

const stringField = (input: unknown, key: string): string | undefined => {
  const value = (input as Record<string, unknown> | null)?.[key];
  return typeof value === 'string' ? value : undefined;
};

/**
 * The skills of one turn: pinned snapshots served by the skill tools, and the step orchestrator that decides what
 * the model may do next. Both are plain data in workflow state, so replays and later turns see the same thing.
 */
export class SkillRuntime {
  private pinned: SkillTurnState = emptySkillTurnState();
  private orchestrator: OrchestratorState = emptyOrchestrator();
  private readonly instructionCalls = new Map<string, string>();

  constructor(
    private readonly run: TurnRun,
    private readonly catalog: SkillManifest[],
  ) {}

  /** Continues a plan the session's previous turn left unfinished; returns the note for the model. */
  resume(carry: PlanCarry): string | undefined {
    for (const snapshot of carry.snapshots) this.pinned = pinSkill(this.pinned, snapshot);
    this.orchestrator = { ...carry.orchestrator, violations: 0 };
    this.publishPosition();
    const plan = this.orchestrator.plan;
    if (plan) return resumeNote(plan);
    const route = this.orchestrator.route;
    return route ? `At ${route.from} the human chose ${route.skill ?? 'to stop'}.` : undefined;
  }

  /** What the session keeps for the next turn: an unfinished plan or a routing choice, with the pinned skills. */
  carry(): PlanCarry | undefined {
    const { plan, route } = this.orchestrator;
    if ((!plan || plan.position.complete) && !route) return undefined;
    return { orchestrator: this.orchestrator, snapshots: Object.values(this.pinned.loaded) };
  }

  tools(): TurnTool[] {
    const definitions = new Map(skillToolDefinitions(this.catalog).map((definition) => [definition.name, definition]));
    const tool = (name: string, run: TurnTool['run'], isSkill = false): TurnTool => ({ definition: definitions.get(name)!, run, isSkill });
    return [
      tool(SkillToolName.loadSkill, (input, call) => this.loadSkill(input, call), true),
      tool(SkillToolName.loadSubskill, (input, call) => this.loadSubskill(input, call)),
      tool(SkillToolName.readFile, (input) => this.plainSkillTool(SkillToolName.readFile, input)),
      tool(SkillToolName.listSkills, (input) => this.plainSkillTool(SkillToolName.listSkills, input)),
    ];
  }

  /** Loads a skill chosen for the whole turn (the API's `skill`), as if the model had called load_skill. */
  async preload(name: string): Promise<string> {
    const outcome = await this.loadSkill({ name }, { type: 'tool_use', id: 'preload', name: SkillToolName.loadSkill, input: { name } });
    return outcome.isError ? `The skill ${name} could not be loaded: ${outcome.content}` : `The skill ${name} is loaded for this turn:\n\n${outcome.content}`;
  }

  private async plainSkillTool(name: string, input: unknown): Promise<ToolOutcome> {
    const { result, state } = await runSkillTool({ name, input }, this.context());
    this.pinned = state;
    return { content: result.content, isError: result.isError };
  }

  private context() {
    return {
      skills: this.catalog,
      state: this.pinned,
      ports: { loadSkillSnapshot: skillActivities.loadSkillSnapshot, readSkillResource: skillActivities.readSkillResource },
      allowedNext: () => (this.orchestrator.plan ? allowedNow(this.orchestrator.plan) : []),
    };
  }

  private async loadSkill(input: unknown, call: ToolUseBlock): Promise<ToolOutcome> {
    const name = stringField(input, 'name');
    if (name !== undefined) {
      const refused = this.refusal(checkLoadSkill(this.orchestrator, name));
      if (refused) return refused;
    }
    const previous = this.orchestrator;
    const manifest = name === undefined ? undefined : (this.catalog.find((skill) => skill.name === name) ?? this.pinned.loaded[name]?.manifest);
    if (manifest) this.orchestrator = startFixedDeadlines(onSkillLoaded(this.orchestrator, manifest), Date.now());
    const { result, state } = await runSkillTool({ name: SkillToolName.loadSkill, input }, this.context());
    this.pinned = state;
    if (result.isError) {
      this.orchestrator = previous;
    } else {
      this.instructionCalls.set('skill', call.id);
      this.publishPosition();
    }
    return { content: result.content, isError: result.isError };
  }

  private async loadSubskill(input: unknown, call: ToolUseBlock): Promise<ToolOutcome> {
    const skill = stringField(input, 'skill');
    const subskill = stringField(input, 'subskill');
    if (skill !== undefined && subskill !== undefined) {
      const refused = this.refusal(checkSubskill(this.orchestrator, skill, subskill));
      if (refused) return refused;
    }
    const { result } = await runSkillTool({ name: SkillToolName.loadSubskill, input }, this.context());
    if (result.isError || skill === undefined || subskill === undefined) return { content: result.content, isError: result.isError };
    this.orchestrator = onSubskillLoaded(this.orchestrator, skill, subskill);
    this.instructionCalls.set('step', call.id);
    this.publishPosition();
    const note = stepLimitNote(this.orchestrator, skill, subskill);
    return { content: note ? `${result.content}\n\n${note}` : result.content, isError: false };
  }

  /** A refused move is a plan violation; past the limit the turn fails. */
  private refusal(verdict: Verdict): ToolOutcome | undefined {
    if (verdict.ok) return undefined;
    const ending = this.violation();
    return ending ? { ...toolError(verdict.message), endTurn: ending } : toolError(verdict.message);
  }

  private violation(): TurnEnding | undefined {
    this.orchestrator = { ...this.orchestrator, violations: this.orchestrator.violations + 1 };
    if (this.orchestrator.violations < this.run.settings.maxPlanViolations) return undefined;
    const plan = this.orchestrator.plan;
    const where = plan ? `skill ${plan.skill} at ${plan.current ? `step ${plan.current}` : 'its start'}` : 'the routing decision';
    return {
      status: 'failed',
      reason: 'plan_violations',
      error: {
        code: 'plan_violations',
        message: `The model broke the plan of ${where} ${this.orchestrator.violations} times; the turn was stopped. Remaining: ${plan ? remainingSteps(plan).join(' → ') : 'none'}.`,
      },
    };
  }

  guard(): LoopGuard {
    return {
      reviewFinal: () => {
        const verdict = checkFinal(this.orchestrator);
        if (verdict.ok) return undefined;
        return this.violation() ?? verdict.message;
      },
      onRoundBudgetExhausted: () => {
        const plan = this.orchestrator.plan;
        if (!plan || plan.position.complete) return undefined;
        return {
          status: 'failed',
          reason: 'max_rounds',
          error: {
            code: 'max_rounds',
            message: `The round budget ran out in skill ${plan.skill}; the plan is kept for the session's next turn. Remaining: ${remainingSteps(plan).join(' → ')}.`,
          },
        };
      },
      protectedToolUseIds: () => new Set(this.instructionCalls.values()),
      beforeRound: () => {
        const { state, message } = applyDeadline(this.orchestrator, Date.now());
        this.orchestrator = state;
        if (message) this.publishPosition();
        return message;
      },
    };
  }

  checkpointRules(defaults: CheckpointPolicy): CheckpointRules {
    return {
      policyFor: (name) => this.policyFor(name, defaults),
      refusal: (name) => {
        const verdict = checkCheckpoint(this.orchestrator, name);
        if (verdict.ok) return undefined;
        this.violation();
        return verdict.message;
      },
      optionsFor: (name) => {
        const routes = checkpointSpec(this.orchestrator.plan, name)?.routes ?? [];
        return routes.length > 0 ? routes.map((route) => route.label) : undefined;
      },
      onResolved: (checkpoint: PendingCheckpoint, decision: CheckpointDecision | 'expired') => {
        this.orchestrator = onCheckpointResolved(this.orchestrator, checkpoint.name, decision, checkpoint.params, Date.now());
        this.publishPosition();
      },
    };
  }

  private policyFor(name: string, defaults: CheckpointPolicy): CheckpointPolicy {
    const plan = this.orchestrator.plan;
    if (!plan) return defaults;
    const manifest = this.pinned.loaded[plan.skill]?.manifest;
    const spec = checkpointSpec(plan, name) ?? manifest?.checkpoints.find((checkpoint) => checkpoint.name === name);
    if (spec) return { ttlMs: spec.ttlMs, onTimeout: spec.onTimeout };
    const free = manifest?.freeCheckpoints;
    const policy: CheckpointPolicy = free ? { ttlMs: free.ttlMs, onTimeout: free.onTimeout } : defaults;
    if (namedCheckpoint(plan, name) || !plan.deadline || plan.deadlinePassed) return policy;
    const untilDeadline = Math.max(0, plan.deadline.atMs - Date.now());
    return policy.ttlMs !== null && policy.ttlMs <= untilDeadline ? policy : { ttlMs: untilDeadline, onTimeout: 'skip' };
  }

  /** The plan's position, everywhere an operator or client looks: turn state, step events, search attributes. */
  private publishPosition(): void {
    const plan = this.orchestrator.plan;
    const state = this.run.state;
    const skill = plan?.skill ?? null;
    const step = plan?.current ?? null;
    const remaining = plan ? remainingSteps(plan) : [];
    if (state.skill === skill && state.step === step && state.remaining.join() === remaining.join()) return;
    state.skill = skill;
    state.step = step;
    state.remaining = remaining;
    upsertSearchAttributes([
      { key: searchAttributes.skill, value: skill },
      { key: searchAttributes.step, value: step },
    ]);
    if (skill) this.run.emit({ type: 'step', skill, step, remaining });
  }
}
