import { Type } from '@sinclair/typebox';
import { Nullable, Timestamp } from '../schemas/common';
import { IdempotencyHeaders, NextCursor, PageQuery, SessionId, TurnId, UserId } from './common';
import { TurnError, TurnStatus } from './turns';

export const SessionParams = Type.Object({ id: SessionId });

export const CreatedSession = Type.Object({ id: SessionId });

export const CreateSessionHeaders = IdempotencyHeaders('the same session');
export const StartTurnHeaders = IdempotencyHeaders('the same turn, also after the session continued as new');

export const SessionListQuery = Type.Object({
  user: Type.Optional({ ...UserId, description: "Operators only: one user's sessions" }),
  ...PageQuery,
});

export const SessionSummary = Type.Object(
  { id: SessionId, userId: Type.String(), createdAt: Timestamp },
  { $id: 'SessionSummary' },
);

export const SessionPage = Type.Object({ sessions: Type.Array(Type.Ref(SessionSummary)), nextCursor: NextCursor });

export const SessionTurn = Type.Object({
  id: TurnId,
  number: Type.Integer({ minimum: 1 }),
  message: Type.String(),
  skill: Nullable(Type.String()),
  status: TurnStatus,
  reason: Nullable(Type.String()),
  output: Nullable(Type.String()),
  error: Nullable(TurnError),
  createdAt: Timestamp,
  endedAt: Nullable(Timestamp),
  truncated: Type.Optional(
    Type.Boolean({
      description: "The text was cut to fit the session's limits; GET /v1/turns/:id has the whole output",
    }),
  ),
});

export const SessionView = Type.Object(
  {
    id: SessionId,
    userId: Type.String(),
    createdAt: Timestamp,
    activeTurnId: Nullable(TurnId),
    turnCount: Type.Integer({ minimum: 0, description: 'How many turns the session has had' }),
    turns: Type.Array(SessionTurn, {
      description:
        'The recent turns, oldest first: at most 100 and 512 KiB of text. Older turns: GET /v1/turns?session=<id>, and each at GET /v1/turns/:id',
    }),
  },
  { $id: 'Session' },
);
