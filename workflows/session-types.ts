import type { TurnSettings } from '../core/settings';
import type { PlanCarry, TurnError, TurnRequest, TurnStatus } from '../core/turn';

export interface SessionInput {
  sessionId: string;
  userId: string;
  createdAt: string;
  settings: TurnSettings;
  /** Carried across continue-as-new. */
  turns?: TurnRecord[];
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
  turns: TurnRecord[];
}

/** The user's request as the API validated it, the id of the API request that carried it (for the turn's logs), and its
 * Idempotency-Key when it had one. */
export type StartTurnRequest = TurnRequest & { requestId?: string; idempotency?: TurnOrigin };

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
