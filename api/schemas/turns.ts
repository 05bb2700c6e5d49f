import { Type, type Static } from '@sinclair/typebox';
import { turnStatuses } from '../../core/turn';
import { NextCursor, Nullable, PageQuery, SessionId, SkillName, StreamTokenQuery, Timestamp, TurnId, UserId } from './common';

export const TurnStatus = Type.Union(turnStatuses.map((status) => Type.Literal(status)));

export const TurnParams = Type.Object({ id: TurnId });

export const StartTurnBody = Type.Object(
  {
    message: Type.String({ minLength: 1, description: 'What the user says' }),
    skill: Type.Optional(SkillName),
    supersede: Type.Optional(Type.Boolean({ description: 'Cancel the session\'s running or waiting turn first' })),
  },
  { additionalProperties: false },
);
export type StartTurnBody = Static<typeof StartTurnBody>;

export const StartTurnQuery = Type.Object({
  wait: Type.Optional(
    Type.Boolean({ description: 'Hold the request until the turn ends or waits at a checkpoint (200 with the turn), up to a bound (then 202)' }),
  ),
});

export const StartedTurn = Type.Object({ id: TurnId, sessionId: SessionId, status: TurnStatus }, { $id: 'StartedTurn' });

export const Usage = Type.Object({
  inputTokens: Type.Integer(),
  outputTokens: Type.Integer(),
  cacheReadInputTokens: Type.Integer(),
  cacheCreationInputTokens: Type.Integer(),
});

export const PendingCheckpoint = Type.Object({
  id: Type.String(),
  name: Type.String(),
  kind: Type.Union([Type.Literal('approval'), Type.Literal('question')]),
  summary: Type.String(),
  params: Nullable(Type.Record(Type.String(), Type.Unknown())),
  options: Nullable(Type.Array(Type.String())),
  requestedAt: Timestamp,
  expiresAt: Nullable(Timestamp),
});

export const TurnError = Type.Object({ code: Type.String(), message: Type.String() });

export const TurnView = Type.Object(
  {
    id: TurnId,
    sessionId: SessionId,
    workflowId: Type.String(),
    status: TurnStatus,
    reason: Nullable(Type.String({ description: 'Why it ended or waits the way it does, e.g. cancelled, terminated, expired' })),
    pendingCheckpoint: Nullable(PendingCheckpoint),
    output: Nullable(Type.String()),
    error: Nullable(TurnError),
    skill: Nullable(Type.String({ description: 'The skill whose plan is in force' })),
    step: Nullable(Type.String({ description: 'That skill\'s current step' })),
    usage: Usage,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Turn' },
);
export type TurnView = Static<typeof TurnView>;

export const TurnListQuery = Type.Object({
  status: Type.Optional(TurnStatus),
  skill: Type.Optional(SkillName),
  session: Type.Optional(SessionId),
  user: Type.Optional({ ...UserId, description: 'Operators only: one user\'s turns' }),
  ...PageQuery,
});
export type TurnListQuery = Static<typeof TurnListQuery>;

export const TurnSummary = Type.Object(
  {
    id: TurnId,
    sessionId: SessionId,
    userId: Type.String(),
    status: TurnStatus,
    skill: Nullable(Type.String()),
    step: Nullable(Type.String()),
    checkpoint: Nullable(Type.String({ description: 'Name of the checkpoint it waits at' })),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'TurnSummary' },
);
export type TurnSummary = Static<typeof TurnSummary>;

export const TurnPage = Type.Object({ turns: Type.Array(Type.Ref(TurnSummary)), nextCursor: NextCursor });

export const CancelAccepted = Type.Object({ id: TurnId, cancelRequested: Type.Literal(true) });

export const EventsQuery = Type.Object({
  after: Type.Optional(Type.Integer({ minimum: 0, description: 'Send events after this offset (Last-Event-ID wins when both are given)' })),
  token: StreamTokenQuery,
});

export const EventsHeaders = Type.Object({
  'last-event-id': Type.Optional(Type.String({ pattern: '^[0-9]{1,12}$', description: 'Resume after this offset' })),
});

export const TurnEvent = Type.Object(
  {
    type: Type.String({ description: 'status, message, message.delta, thinking.delta, message.reset, tool.start, tool.end, checkpoint.*, step, artifact, done, error, cancelled' }),
    offset: Type.Optional(Type.Integer({ description: 'Position in the turn\'s durable log; absent on live-only events' })),
    at: Type.Optional(Timestamp),
  },
  { additionalProperties: true, $id: 'TurnEvent', description: 'One event of a turn (docs/events.md)' },
);
