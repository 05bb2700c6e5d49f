import { defaultHistoryWindowBytes } from './session-records';
import type { Effort } from './thinking';

/**
 * Knobs a turn runs with. They travel in the turn's input (set by whoever starts the session, from its validated
 * configuration), so a turn never reads the environment and replays with the values it started with.
 */
export interface TurnSettings {
  /** Model to call; absent uses the worker's SKILLFLOW_MODEL. */
  model?: string;
  maxTokens?: number;
  /** Attempts per model call, including the first. */
  modelMaxAttempts: number;
  /** One model call's time limit, in milliseconds. */
  modelTimeoutMs: number;
  /** First retry delay of a failed model call (doubling up to a minute); `retry-after` overrides it. */
  modelRetryInitialMs?: number;
  /** Earlier exchanges carried into a new turn. */
  historyWindow: number;
  /**
   * At most this many bytes (UTF-8) of their text. Absent in the settings of sessions created before it existed:
   * `defaultHistoryWindowBytes`.
   */
  historyWindowBytes?: number;
  /** Model calls allowed between two human decisions (or from the start of the turn to the first). */
  maxRounds: number;
  /** Empty responses retried with guidance before the turn gives a recovery answer. */
  maxEmptyRetries: number;
  /** Continuations of an answer cut by max_tokens. */
  maxContinuations: number;
  /** The model's context window, in tokens. */
  contextWindowTokens: number;
  /** Share of the window the conversation may use before settled rounds are compacted. */
  contextBudgetFraction: number;
  /**
   * Whether model calls ask for thinking (adaptive, or the budget form on models that take only it: core/thinking.ts).
   * Absent in the settings of sessions created before it existed: on when `thinkingBudgetTokens` is set.
   */
  thinking?: boolean;
  /** The thinking budget, in tokens, for models that take only the budget form; absent: half of the output limit. */
  thinkingBudgetTokens?: number;
  /** `output_config.effort` unless the active skill names its own; absent: the model's default. */
  effort?: Effort;
  /** How long a checkpoint waits for a human unless its skill says otherwise; null waits as long as the turn lives. */
  checkpointTtlMs: number | null;
  /** What happens when a checkpoint's time runs out, unless its skill says otherwise. */
  checkpointOnTimeout: 'cancel' | 'skip';
  /** Attempts to break a skill's plan (refused steps, early answers) before the turn fails. */
  maxPlanViolations: number;
  /**
   * How deep skill runs may nest: a skill the turn invokes runs at depth 1, one it invokes at 2, ... Absent in the
   * settings of sessions created before it existed: `defaultMaxSkillDepth`.
   */
  maxSkillDepth?: number;
  /**
   * invoke_skill calls one model response may make, and calls one turn may make at any depth (its skill runs'
   * included). Absent in the settings of sessions created before they existed: the defaults below.
   */
  maxInvocationsPerResponse?: number;
  maxInvocationsPerTurn?: number;
}

export const defaultMaxSkillDepth = 3;
export const defaultMaxInvocationsPerResponse = 5;
export const defaultMaxInvocationsPerTurn = 20;

export const defaultTurnSettings: TurnSettings = {
  modelMaxAttempts: 6,
  modelTimeoutMs: 600_000,
  historyWindow: 10,
  historyWindowBytes: defaultHistoryWindowBytes,
  maxRounds: 40,
  maxEmptyRetries: 2,
  maxContinuations: 3,
  contextWindowTokens: 200_000,
  contextBudgetFraction: 0.5,
  checkpointTtlMs: null,
  checkpointOnTimeout: 'cancel',
  maxPlanViolations: 5,
  maxSkillDepth: defaultMaxSkillDepth,
  maxInvocationsPerResponse: defaultMaxInvocationsPerResponse,
  maxInvocationsPerTurn: defaultMaxInvocationsPerTurn,
};
