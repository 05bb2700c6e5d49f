import { Type, type Static } from '@sinclair/typebox';
import { PendingCheckpoint } from '../schemas/checkpoints';
import { Artifact, SkillExecution } from '../schemas/skill-runs';
import { TurnError, TurnRequest, TurnStatus, Usage } from '../schemas/turn';
import { Nullable, SkillName, Timestamp } from '../schemas/common';
import { NextCursor, PageQuery, SessionId, StreamTokenQuery, TurnId, UserId } from './common';

export { TurnStatus };

export const TurnParams = Type.Object({ id: TurnId });

export const StartTurnBody = TurnRequest;
export type StartTurnBody = TurnRequest;

export const StartTurnQuery = Type.Object({
  wait: Type.Optional(
    Type.Boolean({
      description:
        'Hold the request until the turn ends or waits at a checkpoint (200 with the turn), up to a bound (then 202)',
    }),
  ),
});

export const StartedTurn = Type.Object(
  { id: TurnId, sessionId: SessionId, status: TurnStatus },
  { $id: 'StartedTurn' },
);

export { Artifact, PendingCheckpoint, SkillExecution, TurnError, Usage };

export const TurnView = Type.Object(
  {
    id: TurnId,
    sessionId: SessionId,
    workflowId: Type.String(),
    status: TurnStatus,
    reason: Nullable(
      Type.String({ description: 'Why it ended or waits the way it does, e.g. cancelled, terminated, expired' }),
    ),
    pendingCheckpoint: Nullable(PendingCheckpoint),
    output: Nullable(Type.String()),
    error: Nullable(TurnError),
    skill: Nullable(Type.String({ description: 'The skill whose plan is in force' })),
    step: Nullable(Type.String({ description: "That skill's current step" })),
    usage: Usage,
    skills: Type.Array(Type.Ref(SkillExecution), {
      description:
        'Every skill run under the turn (invoke_skill, at any depth), in the order they started: execution records',
    }),
    artifacts: Type.Array(Type.Ref(Artifact), {
      description: "The turn's structured outputs: the declared outputs of its skills, validated",
    }),
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
  user: Type.Optional({ ...UserId, description: "Operators only: one user's turns" }),
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
  after: Type.Optional(
    Type.Integer({ minimum: 0, description: 'Send events after this offset (Last-Event-ID wins when both are given)' }),
  ),
  token: StreamTokenQuery,
});

export const EventsHeaders = Type.Object({
  'last-event-id': Type.Optional(Type.String({ pattern: '^[0-9]{1,12}$', description: 'Resume after this offset' })),
});
