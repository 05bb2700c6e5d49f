import {
  defaultMaxInvocationsPerResponse,
  defaultMaxInvocationsPerTurn,
  defaultMaxSkillDepth,
  defaultTurnSettings,
  type TurnSettings,
} from '../settings';
import type { PolicyRules, PolicySettings, PolicyState } from './types';

/** The rules of code that started before each rule existed: what turns already running keep. */
export const legacyRules: PolicyRules = {
  skillLimits: false,
  refusedCheckpointsEndTurn: false,
  declaredCheckpoints: false,
  routeScopedToPlan: false,
  declaredCheckpointKind: false,
  registeredTools: false,
  structuredOutput: false,
  spendingBounds: false,
};
export const currentRules: PolicyRules = {
  skillLimits: true,
  refusedCheckpointsEndTurn: true,
  declaredCheckpoints: true,
  routeScopedToPlan: true,
  declaredCheckpointKind: true,
  registeredTools: true,
  structuredOutput: true,
  spendingBounds: true,
};

/** The rules baselinePatch implies; spendingBounds came after it and has a patch of its own (separatePatches). */
export type BaselineRule = Exclude<keyof PolicyRules, 'spendingBounds'>;

/**
 * The `patched()` id of each rule. A turn reads them once, when it starts: true for turns started by this code, false
 * for turns started before it (replayed from their history), which keep the old rule to the end (docs/operators.md).
 */
export const rulePatches: Record<BaselineRule, string> = {
  skillLimits: 'skill-limits',
  refusedCheckpointsEndTurn: 'refused-checkpoints-end-turn',
  declaredCheckpoints: 'declared-checkpoint-params',
  routeScopedToPlan: 'route-scoped-to-plan',
  declaredCheckpointKind: 'declared-checkpoint-kind',
  registeredTools: 'tool-registry',
  structuredOutput: 'structured-skill-output',
};

/**
 * The `patched()` ids of engine changes that are not policy rules, read once when a run starts like the rules'.
 * promptByReference: a model call names the system prompt and tool definitions an earlier call of its run sent whole
 * by their digest, and a tool result repeating an earlier one whole (a subskill loaded again) by its digest, instead of
 * carrying them again in every activity input (workflows/model-call.ts, activities/prompt-store.ts).
 * batchedSearchAttributes: the search attribute changes a run makes in one workflow task go to Temporal as one upsert,
 * sent once its code has run as far as it can, instead of one upsert per change (workflows/turn-run.ts).
 */
export const enginePatches = {
  promptByReference: 'prompt-by-reference',
  batchedSearchAttributes: 'batched-search-attributes',
} as const;

/**
 * The `patched()` ids of workflow changes outside the policy rules and the engine's (each read where it is needed),
 * kept here with the others so every id has one place.
 * - failedTurnFails, read when a turn ends (only runs that end `failed` record it): a turn that ends `failed` fails its
 *   workflow (Temporal status Failed, type `TurnFailed`, its result in the details) instead of completing; turns that
 *   ended before it completed, and replay so.
 * - boundedSession, read once per session run (a session run started before it keeps the old way until it continues
 *   as new): a session keeps a bounded tail of its turns and gives a new turn a history window cut in bytes.
 * - skillReferences: a carried plan names its pinned skills by name and hash, and the turn that continues it reads
 *   them back by activity.
 */
export const workflowPatches = {
  failedTurnFails: 'failed-turn-fails-workflow',
  boundedSession: 'bounded-session-state',
  skillReferences: 'carried-skill-references',
} as const;

/**
 * The one patch a run of this code records, first thing (a session, a turn or a skill run): it implies every id of
 * rulePatches, enginePatches and workflowPatches, so a run records one marker (and Core one TemporalChangeVersion
 * upsert) instead of one per patch. A run without it, whose history older code began, reads each of those ids as
 * before (workflows/run-rules.ts). A later change gets a patch id of its own, read besides this one.
 */
export const baselinePatch = 'baseline-2026-11';

/** The patch ids baselinePatch implies. */
export const impliedByBaseline: readonly string[] = [
  ...Object.values(rulePatches),
  ...Object.values(enginePatches),
  ...Object.values(workflowPatches),
];

/** The policy's settings from a turn's (sessions created before a setting existed lack it: its default). */
export function policySettingsOf(settings: Pick<TurnSettings, keyof PolicySettings>): PolicySettings {
  const {
    maxRounds,
    maxPlanViolations,
    checkpointTtlMs,
    checkpointOnTimeout,
    maxSkillDepth,
    maxInvocationsPerResponse,
    maxInvocationsPerTurn,
  } = settings;
  return {
    maxRounds,
    maxPlanViolations,
    checkpointTtlMs,
    checkpointOnTimeout,
    maxSkillDepth: maxSkillDepth ?? defaultMaxSkillDepth,
    maxInvocationsPerResponse: maxInvocationsPerResponse ?? defaultMaxInvocationsPerResponse,
    maxInvocationsPerTurn: maxInvocationsPerTurn ?? defaultMaxInvocationsPerTurn,
  };
}

/** A turn's policy before its `turn.started` event. */
export function newPolicyState(): PolicyState {
  return {
    rules: currentRules,
    settings: policySettingsOf(defaultTurnSettings),
    catalog: [],
    tools: [],
    headers: null,
    rootGrants: [],
    plan: null,
    route: null,
    active: null,
    usage: {},
    clockSince: null,
    violations: 0,
    roundsSinceHuman: 0,
    checkpointCount: 0,
    open: null,
    instructions: {},
    depth: 0,
    children: null,
    given: null,
    outputs: {},
    delegated: null,
    tokenBudget: null,
    invocations: null,
  };
}

/**
 * The `patched()` ids of changes made after baselinePatch: each is read with `patched()` where its change is and
 * recorded as a marker of its own, since a run that recorded the baseline before the change must not read it as true.
 * - turnStartInOneActivity, read once when a turn starts: the turn reads its skill catalog, its tool catalog, its
 *   carried plan's skills and its given skill in one activity (readTurnStart), so in one workflow task, instead of one
 *   activity each.
 * - endingClearsCheckpoint, read when a run (a turn or a skill run) ends with a checkpoint still pending, that is when it
 *   was cancelled while it waited at its own (or, with cancelKeepsCheckpoint, at a skill run's): the ending clears the
 *   checkpoint from its state and its SkillflowCheckpoint search attribute, which showed it waiting after it had ended.
 * - cancelEndsAtSkillReturn, read when a run (a turn or a skill run) that was asked to cancel sees a skill run it invoked
 *   clear its checkpoint or return: the run no longer shows `running` for it, and a returning skill run ends the run
 *   cancelled instead of leading to another model round (which published `running` and counted a model call before it
 *   was cancelled in turn).
 * - cancelKeepsCheckpoint, read when a run asked to cancel sees the skill run whose checkpoint it shows clear it (that
 *   run was cancelled with it): the run keeps showing the checkpoint, with its `waiting`, until its ending clears both
 *   at once, instead of clearing the checkpoint at once and showing `waiting` with none until it ended.
 * - cancelEndsToolCalls, read when a cancel cuts a tool call a run was answering (a skill run, a checkpoint, an
 *   activity): the run logs the call's `tool.end`, a cancelled error, so every `tool.start` in its log has its end.
 * - spendingBounds, read once when a run (a turn or a skill run) starts, as the policy rule of that name: invoke_skill
 *   calls are capped per response and per turn, the token budget is handed down to skill runs and checked before each
 *   of their rounds, and a run with a budget reserves each round's tokens in the user's day ledger (two local
 *   activities a round: reserveTokens, settleTokens). Its skill-call events name the skill and depth also for an invoke_skill the
 *   run was not offered (past the depth cap), and a turn's own load_skill events carry no depth.
 * - toolCatalogByReference, read once when a turn starts (with turnStartInOneActivity): the turn reads the tool catalog
 *   as headers, each tool without its description and input schema and naming them by digest (ToolCatalogReference),
 *   hands its skill runs the same, and a run reads the detail of the tools a skill grants it when it first needs them
 *   (the readToolDetails activity), instead of the whole catalog crossing history in every turn and skill run.
 */
export const separatePatches = {
  turnStartInOneActivity: 'turn-start-in-one-activity',
  endingClearsCheckpoint: 'ending-clears-checkpoint',
  cancelEndsAtSkillReturn: 'cancel-ends-at-skill-return',
  cancelKeepsCheckpoint: 'cancel-keeps-mirrored-checkpoint',
  cancelEndsToolCalls: 'cancel-ends-tool-calls',
  spendingBounds: 'spending-bounds',
  toolCatalogByReference: 'tool-catalog-by-reference',
} as const;
