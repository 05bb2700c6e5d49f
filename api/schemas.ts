import { Type, type Static } from '@sinclair/typebox';
import { checkpointActions } from '../core/checkpoints';
import { turnStatuses } from '../core/turn';

/** One definition per shape: request validation, TypeScript types and the OpenAPI document all come from here. */

export const ErrorBody = Type.Object(
  { error: Type.Object({ code: Type.String(), message: Type.String() }) },
  { $id: 'Error' },
);

export const SessionId = Type.String({ pattern: '^[a-z0-9]{8,40}$', description: 'Session id' });
export const TurnId = Type.String({ pattern: '^turn-[a-z0-9]{8,40}-[0-9]{1,9}$', description: 'Turn id (also its workflow id)' });

export const SessionParams = Type.Object({ id: SessionId });
export const TurnParams = Type.Object({ id: TurnId });

export const CreatedSession = Type.Object({ id: SessionId });

export const StartTurnBody = Type.Object(
  {
    message: Type.String({ minLength: 1, description: 'What the user says' }),
    skill: Type.Optional(Type.String({ pattern: '^[a-z0-9-]{1,64}$', description: 'Start the turn with this skill loaded' })),
    supersede: Type.Optional(Type.Boolean({ description: 'Cancel the session\'s running turn first' })),
  },
  { additionalProperties: false },
);
export type StartTurnBody = Static<typeof StartTurnBody>;

const Status = Type.Union(turnStatuses.map((status) => Type.Literal(status)));

export const StartedTurn = Type.Object({ id: TurnId, sessionId: SessionId, status: Status });

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
  params: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  options: Type.Union([Type.Array(Type.String()), Type.Null()]),
  requestedAt: Type.String(),
  expiresAt: Type.Union([Type.String(), Type.Null()]),
});

export const TurnView = Type.Object(
  {
    id: TurnId,
    sessionId: SessionId,
    workflowId: Type.String(),
    status: Status,
    reason: Type.Union([Type.String(), Type.Null()]),
    output: Type.Union([Type.String(), Type.Null()]),
    pendingCheckpoint: Type.Union([PendingCheckpoint, Type.Null()]),
    error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()]),
    usage: Usage,
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Turn' },
);
export type TurnView = Static<typeof TurnView>;

export const CheckpointParams = Type.Object({ id: TurnId, checkpointId: Type.String({ pattern: '^cp-[0-9]{1,9}$' }) });

export const CheckpointAnswer = Type.Object(
  {
    action: Type.Union(checkpointActions.map((action) => Type.Literal(action))),
    overrides: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'modify: new values for the checkpoint\'s params' })),
    choice: Type.Optional(Type.String({ description: 'choose: one of the options, exactly as offered' })),
    answer: Type.Optional(Type.String({ description: 'answer: free text' })),
  },
  { additionalProperties: false },
);
export type CheckpointAnswer = Static<typeof CheckpointAnswer>;

export const CheckpointAccepted = Type.Object({ checkpointId: Type.String(), action: Type.String(), by: Type.String() });


export const errorResponses = (...codes: number[]) =>
  Object.fromEntries(codes.map((code) => [code, { $ref: 'Error#' }]));
