import { zeroUsage, type Usage } from './model';
import type { PendingCheckpoint } from './checkpoints';
import type { PlanCarry } from './policy/plan-carry';
import type { Exchange } from './session-records';
import type { Reason } from './run/reasons';
import type { TurnSettings } from './settings';
import type { TurnStatus } from './turn-status';
import type { Artifact, SkillExecution } from './schemas/skill-runs';
import type { TurnError, TurnRequest } from './schemas/turn';

export { terminalStatuses, turnStatuses, type TurnStatus } from './turn-status';
export type { Exchange } from './session-records';

export interface TurnInput {
  turnId: string;
  sessionId: string;
  userId: string;
  message: string;
  /** Earlier exchanges of the session, oldest first, already cut to the configured window. */
  history: Exchange[];
  /** Start the turn with this skill loaded. */
  skill?: string;
  /** With `skill`: its parameters as the caller gave them (the API validated them); its checkpoints propose them. */
  params?: Record<string, unknown>;
  createdAt: string;
  settings: TurnSettings;
  /** A plan left unfinished by the session's previous turn, to be continued (read with readPlanCarry). */
  resume?: PlanCarry;
  /** The id of the API request that started the turn (`x-request-id`); the turn's logs carry it. */
  requestId?: string;
  /**
   * Model tokens the turn may use: what was left of the user's daily budget (SKILLFLOW_USER_DAILY_TOKENS) when the API
   * started it. Absent: no budget. Beyond it, the turn fails with reason `token_budget` before its next model call.
   */
  tokenBudget?: number;
}

export type { PlanCarry } from './policy/plan-carry';

export type { TurnError, TurnRequest };

/** What a finished turn returns, and what the session records of it. */
export interface TurnResult {
  turnId: string;
  status: Exclude<TurnStatus, 'running' | 'waiting'>;
  /** Why the turn ended the way it did when that is not simply "the model answered". */
  reason?: Reason;
  output?: string;
  error?: TurnError;
  usage: Usage;
  skill?: string | null;
  step?: string | null;
  plan?: PlanCarry;
  /** The skill runs under the turn (invoke_skill, any depth): their execution records. */
  skills?: SkillExecution[];
  /** The turn's structured outputs. */
  artifacts?: Artifact[];
}

/**
 * The failure type of a turn workflow that failed (Temporal status Failed) because the turn ended `failed`: its one
 * detail is the turn's TurnResult, so the session, the API and quotas read the same result as from a completed turn.
 */
export const turnFailedErrorType = 'TurnFailed';

/** The TurnResult a `TurnFailed` failure carries in its details; undefined for any other failure. */
export function turnResultOfFailure(
  type: string | undefined,
  details: readonly unknown[] | undefined,
): TurnResult | undefined {
  if (type !== turnFailedErrorType) return undefined;
  const result = details?.[0] as Partial<TurnResult> | undefined;
  return result && typeof result.turnId === 'string' && result.status === 'failed' && typeof result.usage === 'object'
    ? (result as TurnResult)
    : undefined;
}

/** The live view of a turn, served by the turn workflow's query. */
export interface TurnState {
  turnId: string;
  sessionId: string;
  userId: string;
  status: TurnStatus;
  reason?: Reason;
  output?: string;
  error?: TurnError;
  usage: Usage;
  modelCalls: number;
  pendingCheckpoint: PendingCheckpoint | null;
  /** The skill whose plan is in force, its current step and the steps still required (the orchestrator's view). */
  skill: string | null;
  step: string | null;
  remaining: string[];
  /** The skill runs under the turn (absent in turns of older code). */
  skills?: SkillExecution[];
  /** The structured outputs so far (absent in turns of older code). */
  artifacts?: Artifact[];
  createdAt: string;
  updatedAt: string;
}

/** A turn's state when it starts: running, nothing used, no skill, no checkpoint. */
export function startingTurnState(
  identity: Pick<TurnState, 'turnId' | 'sessionId' | 'userId' | 'createdAt' | 'updatedAt'>,
): TurnState {
  return {
    ...identity,
    status: 'running',
    usage: zeroUsage(),
    modelCalls: 0,
    pendingCheckpoint: null,
    skill: null,
    step: null,
    remaining: [],
    skills: [],
    artifacts: [],
  };
}

export function turnWorkflowId(sessionId: string, turnNumber: number): string {
  return `turn-${sessionId}-${turnNumber}`;
}

export function sessionWorkflowId(sessionId: string): string {
  return `session-${sessionId}`;
}
