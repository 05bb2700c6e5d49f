import { Type, type Static } from '@sinclair/typebox';
import { checkpointActions } from '../checkpoints';
import { Nullable, Timestamp } from './common';

export const CheckpointKind = Type.Union([Type.Literal('approval'), Type.Literal('question')]);
export type CheckpointKind = Static<typeof CheckpointKind>;

export const CheckpointAction = Type.Union(checkpointActions.map((action) => Type.Literal(action)));

/** A checkpoint the turn waits at: what the human is asked, and what an answer must name (`id`). */
export const PendingCheckpoint = Type.Object({
  id: Type.String({ description: 'What an answer names, e.g. cp-3' }),
  name: Type.String({ description: 'The checkpoint name, e.g. exam_params' }),
  kind: CheckpointKind,
  summary: Type.String({ description: 'What the human is asked to decide or answer' }),
  params: Nullable(Type.Record(Type.String(), Type.Unknown(), { description: 'Proposed parameters (approval); modify overrides them' })),
  options: Nullable(Type.Array(Type.String(), { description: 'Choices offered; choose returns one exactly as written' })),
  requestedAt: Timestamp,
  expiresAt: Nullable({ ...Timestamp, description: 'null: waits as long as the turn lives' }),
});
export type PendingCheckpoint = Static<typeof PendingCheckpoint>;

/** A human's answer to a pending checkpoint (the body of `POST /v1/turns/:id/checkpoints/:checkpointId`). */
export const CheckpointAnswer = Type.Object(
  {
    action: CheckpointAction,
    overrides: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'modify: new values for the checkpoint\'s params' })),
    choice: Type.Optional(Type.String({ description: 'choose: one of the options, exactly as offered' })),
    answer: Type.Optional(Type.String({ description: 'answer: free text' })),
  },
  { additionalProperties: false },
);
export type CheckpointAnswer = Static<typeof CheckpointAnswer>;
