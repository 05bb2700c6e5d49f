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
}

export interface SessionState {
  sessionId: string;
  userId: string;
  createdAt: string;
  closed: boolean;
  activeTurnId?: string;
  turns: TurnRecord[];
}

/** The user's request as the API validated it, and the id of the API request that carried it (for the turn's logs). */
export type StartTurnRequest = TurnRequest & { requestId?: string };

export interface StartTurnResponse {
  turnId: string;
  number: number;
}

/** ApplicationFailure types the session's update rejects with; the API maps them to HTTP codes. */
export const SessionErrorType = {
  turnInProgress: 'TurnInProgress',
  sessionClosed: 'SessionClosed',
} as const;
