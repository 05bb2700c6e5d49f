import type { TurnSettings } from '../core/settings';
import type { PlanCarry, TurnError, TurnStatus } from '../core/turn';

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

export interface StartTurnRequest {
  message: string;
  skill?: string;
  supersede?: boolean;
}

export interface StartTurnResponse {
  turnId: string;
  number: number;
}

/** ApplicationFailure types the session's update rejects with; the API maps them to HTTP codes. */
export const SessionErrorType = {
  turnInProgress: 'TurnInProgress',
  sessionClosed: 'SessionClosed',
} as const;
