import type { Reservation } from '../budget';
import type {
  CheckpointAction,
  CheckpointDecision,
  CheckpointKind,
  DecisionProblem,
  PendingCheckpoint,
} from '../checkpoints';
import type { JsonSchema } from '../json-validator';
import type { PlanSymbol } from '../skills/plan-ast';
import type {
  CheckpointSpec,
  FieldSpec,
  FreeCheckpointPolicy,
  OnTimeout,
  SkillLimits,
  SkillManifest,
} from '../skills/types';
import type { TurnSettings } from '../settings';
import type { ToolCatalog, ToolCatalogReference, ToolHeader, ToolSpec } from '../tools/types';
import type { Ending } from '../run/endings';
import type { ActivePlan, PlanCarry, Route } from './plan-carry';

export type { ActivePlan, PlanCarry, Route } from './plan-carry';

/**
 * The turn's policy as plain JSON: a reducer `(state, event) -> { state, verdict }` (reduce.ts) decides everything
 * the model may or may not do, and the workflow only applies its verdicts. Nothing here knows about Temporal.
 */

/** The skill in force: the one loaded last (or whose plan a turn resumed). Its limits count while it is active. */
export interface ActiveSkill {
  name: string;
  limits: SkillLimits;
  checkpoints: CheckpointSpec[];
  /** null: the skill says nothing, the configured default applies. */
  freeCheckpoints: FreeCheckpointPolicy | null;
  /** Its `allowed-tools` words and sidecar `tools`: the registered tools the model sees while it is active. */
  grants: string[];
  /** Its declared output: required with its plan's final answer in a turn, and as a skill run's final answer. */
  output: FieldSpec[];
  /** The skills it may invoke. */
  children: string[];
}

/** What of a manifest the policy keeps for the active skill (a manifest of older code may lack nullable fields). */
export type SkillManifestLike = Pick<SkillManifest, 'name' | 'limits' | 'checkpoints' | 'freeCheckpoints'> &
  Partial<Pick<SkillManifest, 'allowedTools' | 'tools' | 'output' | 'children'>>;

/** What a skill has used of its limits in this turn: model rounds and active time (human waits excluded). */
export interface SkillUsage {
  rounds: number;
  activeMs: number;
}

/** The checkpoint the turn waits at, as the policy decided it. */
export interface OpenCheckpoint {
  id: string;
  name: string;
  kind: CheckpointKind;
  params: Record<string, unknown> | null;
  paramsSchema: JsonSchema | null;
  options: string[] | null;
  actions: CheckpointAction[];
  onTimeout: OnTimeout;
  /** Set when the checkpoint asks a human to approve a tool call: its params are the call's input. */
  tool?: ToolApproval;
}

/** The tool call a checkpoint asks about. */
export interface ToolApproval {
  name: string;
  callId: string;
}

export type PolicySettings = Pick<
  TurnSettings,
  'maxRounds' | 'maxPlanViolations' | 'checkpointTtlMs' | 'checkpointOnTimeout'
> & {
  maxSkillDepth: number;
  maxInvocationsPerResponse: number;
  maxInvocationsPerTurn: number;
};

/** A checkpoint a skill run below this one waits at: answers to it are checked here and passed down. */
export type DelegatedCheckpoint = Pick<
  PendingCheckpoint,
  'id' | 'name' | 'kind' | 'params' | 'paramsSchema' | 'options' | 'actions'
>;

/** A skill's structured output in this run: whether it was given, and the corrections it took. */
export interface OutputState {
  given: boolean;
  corrections: number;
}

/** What a skill run is, for the policy of that run: its skill, where it sits, and what it was given. */
export interface SkillRunStart {
  manifest: SkillManifest;
  depth: number;
  /** The checkpoints its turn has numbered so far: the run's own continue from there, so ids stay unique in the turn. */
  checkpointBase: number;
  params: Record<string, unknown>;
  /** The invoke_skill calls its invoker left it (absent: invoked by code before spending bounds; the turn's cap). */
  invocationsLeft?: number;
}

/** invoke_skill calls of a run with spending bounds: what it and the runs under it may still make, and this response's. */
export interface InvocationCount {
  left: number;
  inResponse: number;
}

export interface PolicyState {
  settings: PolicySettings;
  /** The skills of the turn's catalog (by name). */
  catalog: string[];
  /**
   * The registered tools of the turn's tool catalog (engine tools are not in it: they are always offered); with
   * `headers`, only those whose detail the run has read (`tools.detailed`), in the order it read them.
   */
  tools: ToolSpec[];
  /** The catalog's headers, when the run read it by reference (ToolCatalogReference); null when `tools` is all of it. */
  headers: ToolHeader[] | null;
  /** The grants of the root turn, while no skill is active (SKILLFLOW_DEFAULT_TOOLS). */
  rootGrants: string[];
  plan: ActivePlan | null;
  route: Route | null;
  active: ActiveSkill | null;
  usage: Record<string, SkillUsage>;
  /** When the active skill's clock last started; null while it is stopped (a human is asked, or no skill is active). */
  clockSince: number | null;
  violations: number;
  roundsSinceHuman: number;
  /** Checkpoints opened so far: ids are cp-1, cp-2, ... */
  checkpointCount: number;
  open: OpenCheckpoint | null;
  /** The tool_use ids whose results hold the loaded skill's and the current step's instructions. */
  instructions: { skill?: string; step?: string };
  /** Where this run sits among skill runs: 0 for a turn, n for a skill run n levels down. */
  depth: number;
  /** What this run may invoke: null for a turn (any skill of the catalog, within its plan), a skill run's children. */
  children: string[] | null;
  /** Parameters a caller gave the skill (the API's typed start, or invoke_skill): its checkpoints propose them. */
  given: { skill: string; params: Record<string, unknown> } | null;
  /** Structured outputs, per skill. */
  outputs: Record<string, OutputState>;
  /** The checkpoint of a skill run this run waits for, mirrored so its answers can be checked and passed down. */
  delegated: DelegatedCheckpoint | null;
  /**
   * Model tokens the run (and the runs under it) may use: for a turn, what was left of its user's daily budget when
   * it started; for a skill run, what its invoker had left when it invoked it. null is no limit.
   */
  tokenBudget: number | null;
  /** The invoke_skill calls the run may still make, and those of the current response. */
  invocations: InvocationCount;
}

export interface ToolCall {
  id: string;
  name: string;
  input: unknown;
}

/** What a finished tool call did, as far as the policy cares. */
export type ToolOutcome =
  | { kind: 'failed' }
  | { kind: 'done' }
  | { kind: 'skill.loaded'; manifest: SkillManifest }
  | { kind: 'subskill.loaded'; skill: string; subskill: string }
  /** A skill run it invoked has ended, having numbered checkpoints up to `checkpointCount` and started `runs` under it. */
  | { kind: 'skill.invoked'; checkpointCount: number; runs?: number }
  /** An allowed invoke_skill whose input the tool refused (seed 002's checks): nothing started. */
  | { kind: 'skill.unstarted' };

export type PolicyEvent =
  | {
      type: 'turn.started';
      at: number;
      settings: PolicySettings;
      catalog: string[];
      carry?: PlanCarry;
      /** The worker's registered tools, read when the turn started: whole, or by reference. */
      tools?: ToolCatalog | ToolCatalogReference;
      /** The parameters the API's caller gave with the turn's skill. */
      given?: { skill: string; params: Record<string, unknown> };
      /** Present when this is a skill run, not a turn. */
      invocation?: SkillRunStart;
      /** What was left of the user's daily token budget when the turn started (absent: no budget). */
      tokenBudget?: number;
    }
  /**
   * Before each model call; also where an exhausted round budget, the skill limits and the token budget are decided.
   * `tokens`: what the run's model calls (its skill runs' included) used so far; `estimate`: the tokens the round's
   * request may take (its prompt and output), what it reserves in the user's day ledger.
   */
  | { type: 'round.starting'; at: number; tokens?: number; estimate?: number }
  /** What the user's day ledger granted of the reservation a round.starting allow asked for. */
  | { type: 'tokens.reserved'; reservation: Reservation }
  /** The detail of registered tools the run read (a skill grants them, and the run held their headers only). */
  | { type: 'tools.detailed'; specs: ToolSpec[] }
  /** Every tool call, engine tools included; request_human_approval is how a checkpoint is requested. `tokens` as above. */
  | { type: 'tool.requested'; at: number; call: ToolCall; tokens?: number }
  | { type: 'tool.finished'; at: number; call: ToolCall; outcome: ToolOutcome }
  | { type: 'checkpoint.resolved'; at: number; decision: CheckpointDecision }
  | { type: 'checkpoint.expired'; at: number }
  /** A skill run below this one opened a checkpoint (or closed it: null); it has numbered up to `checkpointCount`. */
  | { type: 'checkpoint.delegated'; checkpoint: DelegatedCheckpoint | null; checkpointCount: number }
  /** The model answered without tools: `text` is its answer. */
  | { type: 'final.proposed'; text?: string };

/** Everything the workflow needs to ask a human: the request as the policy shaped it, and how long it waits. */
export interface CheckpointPlan {
  id: string;
  name: string;
  kind: CheckpointKind;
  summary: string;
  params: Record<string, unknown> | null;
  paramsSchema: JsonSchema | null;
  options: string[] | null;
  actions: CheckpointAction[];
  ttlMs: number | null;
  onTimeout: OnTimeout;
  tool?: ToolApproval;
  /** The skill that asks (null: none is active), and the depth of the run it asks in (0: the turn). */
  skill: string | null;
  depth: number;
}

export interface Allow {
  kind: 'allow';
  /** Text for the model: after a tool result, or before the next model call. */
  note?: string;
  /** Wait for a human with this checkpoint before answering the tool call. */
  ask?: CheckpointPlan;
  /** The tool result of a resolved or expired checkpoint. */
  result?: unknown;
  /** What the plan allows now, for a freshly loaded skill's instructions. */
  allowedNext?: PlanSymbol[];
  /** Run the registered tool with this input: the model's, validated with defaults filled in, or as a human approved it. */
  input?: Record<string, unknown>;
  /** A skill run's final answer accepted as its declared output (validated, defaults filled in). */
  output?: unknown;
  /** The decision is for a skill run's checkpoint: pass it down. */
  forward?: true;
  /** Before the round's model call, reserve these tokens in the user's day ledger (then tell the policy: tokens.reserved). */
  reserve?: ReserveAsk;
  /** An allowed invoke_skill: what the skill run it starts may spend. */
  handDown?: Allowance;
}

/** A reservation to make: `tokens` for the round, and what the run may still use (the turn's ceiling when none is set). */
export interface ReserveAsk {
  tokens: number;
  left: number;
}

/** What a skill run may spend: invoke_skill calls, and model tokens (null: no budget). */
export interface Allowance {
  invocations: number;
  tokens: number | null;
}

export type RefusalCode = 'refused' | 'not_found' | 'not_pending' | 'invalid_decision';

export interface Refuse {
  kind: 'refuse';
  message: string;
  code: RefusalCode;
  problems?: DecisionProblem[];
}

/** Before ending, one more model call without tools: its text is the output (or `fallback` when it says nothing). */
export interface LastWord {
  guidance: string;
  /** What the model call is for, in the activity summary operators read. */
  purpose: string;
  fallback?: string;
  /** Compact the conversation hard first (the round budget ran out, the context is likely full). */
  compact?: boolean;
}

export interface End {
  kind: 'end';
  ending: Ending;
  lastWord?: LastWord;
  /** The tool result of the call that ended the turn, when it has one (a cancelled or expired checkpoint). */
  result?: unknown;
}

export type Verdict = Allow | Refuse | End;

export interface Reduction {
  state: PolicyState;
  verdict: Verdict;
}
