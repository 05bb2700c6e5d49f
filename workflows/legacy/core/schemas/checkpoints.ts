import { Type, type Static } from '@sinclair/typebox';
import { checkpointActions, maxNoteLength } from '../checkpoint-actions';
import type { JsonSchema } from '../json-validator';
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
  params: Nullable(
    Type.Record(Type.String(), Type.Unknown(), {
      description:
        'Proposed parameters (approval), with the declared defaults filled in for those left out; modify overrides them',
    }),
  ),
  paramsSchema: Nullable(
    Type.Unsafe<JsonSchema>({
      type: 'object',
      additionalProperties: true,
      description:
        "JSON Schema that modify's overrides must satisfy: the params the skill declares (types, ranges, enums), or else the proposed keys and JSON types",
    }),
  ),
  options: Nullable(
    Type.Array(Type.String(), { description: 'Choices offered; choose returns one exactly as written' }),
  ),
  actions: Type.Array(CheckpointAction, {
    description:
      'The actions an answer may take: approve, modify, cancel (approval) or answer, cancel (question), and choose when there are options',
  }),
  requestedAt: Timestamp,
  expiresAt: Nullable({ ...Timestamp, description: 'null: waits as long as the turn lives' }),
  tool: Type.Optional(
    Type.Object(
      {
        name: Type.String({ description: 'The tool the model wants to run' }),
        callId: Type.String({ description: "The model's tool_use id" }),
      },
      {
        description:
          'Set when the checkpoint asks to approve a tool call (name tool:NAME): params are its input, paramsSchema its input schema; cancel skips the tool and the turn goes on',
      },
    ),
  ),
  skill: Type.Optional(Nullable(Type.String({ description: 'The skill that asked (null: none was active)' }))),
  depth: Type.Optional(
    Type.Integer({
      minimum: 0,
      description: '0: the turn itself asked; n: a skill run n levels down asked (answer it here all the same)',
    }),
  ),
});
export type PendingCheckpoint = Static<typeof PendingCheckpoint>;

/** A human's answer to a pending checkpoint (the body of `POST /v1/turns/:id/checkpoints/:checkpointId`). */
export const CheckpointAnswer = Type.Object(
  {
    action: CheckpointAction,
    overrides: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: "modify: new values for the checkpoint's params, checked against pendingCheckpoint.paramsSchema",
      }),
    ),
    note: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: maxNoteLength,
        description:
          'modify: the change in your own words ("make it 15 questions, no essays"), alone or with overrides; the model receives it',
      }),
    ),
    choice: Type.Optional(Type.String({ description: 'choose: one of the options, exactly as offered' })),
    answer: Type.Optional(Type.String({ description: 'answer: free text' })),
  },
  { additionalProperties: false },
);
export type CheckpointAnswer = Static<typeof CheckpointAnswer>;
