import type { TurnSettings } from './core/settings';
import type { PlanCarry, TurnError, TurnRequest, TurnStatus } from './core/turn';

export interface SessionInput {
  sessionId: string;
  userId: string;
  createdAt: string;
  settings: TurnSettings;
  /** Carried across continue-as-new: the recent turns (all of them, from runs of code before the bound). */
  turns?: TurnRecord[];
  /** Turns the session has numbered so far; absent from runs of older code, whose `turns` held every turn. */
  turnCount?: number;
  /** A plan the last turn left unfinished, continued by the next one. */
  plan?: PlanCarry;
}

export interface TurnRecord {
  id: string;
  number: number;
  message: string;
  skill?: string;
  status: TurnStatus;
  reason?: string;
  output?: string;
  error?: TurnError;
  createdAt: string;
  endedAt?: string;
  /** The Idempotency-Key (its digest) of the request that started it, and what a retry must match: kept across continue-as-new. */
  idempotency?: TurnOrigin;
  /** The text was cut to fit the session's limits; the turn's own workflow has all of it. */
  truncated?: boolean;
}

/** The request that started a turn under an Idempotency-Key: a retry with the key gets this turn back. */
export interface TurnOrigin {
  key: string;
  requestDigest: string;
  attempt: string;
}

export interface SessionState {
  sessionId: string;
  userId: string;
  createdAt: string;
  closed: boolean;
  activeTurnId?: string;
  /** How many turns the session has numbered (the last turn's number). */
  turnCount: number;
  /** The recent turns, oldest first: at most sessionRecordLimits of them (core/session-records.ts). */
  turns: TurnRecord[];
}

/**
 * The user's request as the API validated it, the id of the API request that carried it (for the turn's logs), its
 * Idempotency-Key when it had one, and what was left of the user's daily token budget then (absent: no budget).
 */
export type StartTurnRequest = TurnRequest & { requestId?: string; idempotency?: TurnOrigin; tokenBudget?: number };

/** The turn; with a key, the request that started it (another attempt's, when this was a retry). */
export interface StartTurnResponse {
  turnId: string;
  number: number;
  idempotency?: TurnOrigin;
}

/** ApplicationFailure types the session's update rejects with; the API maps them to HTTP codes. */
export const SessionErrorType = {
  turnInProgress: 'TurnInProgress',
  sessionClosed: 'SessionClosed',
} as const;
