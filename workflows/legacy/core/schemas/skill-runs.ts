import { Type, type Static } from '@sinclair/typebox';
import { Nullable, SkillName, Timestamp } from './common';
import { TurnError, TurnStatus, Usage } from './turn';

/** A typed parameter (or output field) of a skill, as skillflow.yaml declares it: what invalid calls list as expected. */
export const FieldSpec = Type.Object({
  name: Type.String(),
  type: Type.String(),
  description: Type.String(),
  required: Type.Boolean(),
  default: Type.Optional(Type.Unknown()),
  enum: Type.Optional(Type.Array(Type.Union([Type.String(), Type.Number()]))),
  items: Type.Optional(Type.String()),
  minimum: Type.Optional(Type.Number()),
  maximum: Type.Optional(Type.Number()),
});

/** One message of the `history` an invocation hands its skill run: user or assistant text, nothing else. */
export const HistoryMessage = Type.Object(
  {
    role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]),
    content: Type.String({ minLength: 1 }),
  },
  { additionalProperties: false },
);
export type HistoryMessage = Static<typeof HistoryMessage>;

/**
 * The execution record of one skill run (an `invoke_skill` call, at any depth): what ran, with which input, how it
 * ended and what it returned. The turn keeps the records of every run under it (`GET /v1/turns/:id`, `skills`); each
 * run is also a child workflow with search attributes of its own (docs/skills.md).
 */
export const SkillExecution = Type.Object(
  {
    workflowId: Type.String({
      description: "The skill run's child workflow id (in the Temporal UI, under its parent)",
    }),
    parentWorkflowId: Type.String({ description: 'The turn, or the skill run that invoked it' }),
    callId: Type.String({ description: 'The invoke_skill call (tool_use id) that started it' }),
    skill: SkillName,
    depth: Type.Integer({ minimum: 1, description: '1 for a skill the turn invoked, +1 per nesting' }),
    status: TurnStatus,
    task: Type.String(),
    params: Type.Record(Type.String(), Type.Unknown(), {
      description: 'The parameters it ran with: validated, declared defaults filled in',
    }),
    startedAt: Timestamp,
    endedAt: Nullable(Timestamp),
    durationMs: Nullable(Type.Integer({ description: 'From start to end, human waits included' })),
    output: Type.Unknown({
      description:
        'What it returned: the validated JSON of a skill that declares an output, else its answer text; null while it runs or when it failed',
    }),
    error: Nullable(TurnError),
    usage: Usage,
  },
  { $id: 'SkillExecution' },
);
export type SkillExecution = Static<typeof SkillExecution>;

/** A structured output of the turn: a skill's declared output, validated (the `artifact` events, kept). */
export const Artifact = Type.Object(
  {
    name: Type.String({ description: 'The skill whose output it is' }),
    mimeType: Type.String(),
    data: Type.Unknown(),
    callId: Type.String({ description: 'The submit_output or invoke_skill call that produced it' }),
    depth: Type.Integer({ minimum: 0, description: "0 for the turn's own skill, else the depth of the skill run" }),
  },
  { $id: 'Artifact' },
);
export type Artifact = Static<typeof Artifact>;
