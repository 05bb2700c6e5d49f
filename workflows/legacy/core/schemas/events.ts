import { Type, type Static, type TProperties } from '@sinclair/typebox';
import { CheckpointAction, PendingCheckpoint } from './checkpoints';
import { TurnStatus } from './turn';
import { toolSources } from '../tools/types';

/**
 * Where in the tree of skill runs an event happened: absent for the turn itself, n inside a skill run n levels down
 * (docs/skills.md). A skill run's events reach its turn's log and stream with their depth.
 */
const located = {
  depth: Type.Optional(
    Type.Integer({
      minimum: 1,
      description:
        'Inside a skill run: its depth (1 for a skill the turn invoked). On the tool events of invoke_skill and load_skill: the depth of the skill called',
    }),
  ),
};

/** The turn's event catalogue (docs/events.md): one schema per event type, the `type` literal first. */
const event = <T extends string, P extends TProperties>(type: T, description: string, properties: P) =>
  Type.Object({ type: Type.Literal(type), ...properties, ...located }, { description });

/** Live deltas carry the model call they belong to (its activity id) and that call's attempt. */
const callAndAttempt = {
  call: Type.Optional(Type.String({ description: 'The model call (activity id) that produced it' })),
  attempt: Type.Optional(
    Type.Integer({ description: 'The attempt of that call; a higher one replaces the text of an earlier one' }),
  ),
};
/** Skill calls (invoke_skill, load_skill) say so; their `name` is the skill's for invoke_skill. */
const skillCall = {
  isSkill: Type.Optional(Type.Boolean({ description: 'A skill call: invoke_skill (name is the skill) or load_skill' })),
};
/** Where the tool comes from: the engine, a built-in, a module of the tools folder, or an MCP server (named). */
const toolOrigin = {
  source: Type.Optional(
    Type.Union(
      toolSources.map((source) => Type.Literal(source)),
      { description: 'engine, builtin, custom or mcp; absent for a name no tool has' },
    ),
  ),
  server: Type.Optional(Type.String({ description: 'The MCP server of an mcp tool' })),
};

/**
 * What `tool.end` shows for a skill text the model was given (load_skill, load_subskill): which text, not the text.
 * The skill's version hash names its files (the text is the skill's, sanitized); `chars` is the length of what the
 * model got.
 */
export const SkillContentReference = Type.Object(
  {
    skill: Type.String({ description: 'The skill loaded' }),
    subskill: Type.Optional(Type.String({ description: 'load_subskill: the subskill loaded' })),
    hash: Type.String({ description: "sha256 (hex) of the skill version's files, the version pinned in the turn" }),
    chars: Type.Integer({ minimum: 0, description: 'Length of the tool result the model was given' }),
  },
  { description: 'A skill text given to the model, by reference' },
);
export type SkillContentReference = Static<typeof SkillContentReference>;

export const turnEventSchemas = {
  status: event('status', "The turn's status changed", { status: TurnStatus, reason: Type.Optional(Type.String()) }),
  'message.delta': event('message.delta', "Live only: a piece of the model's text as it streams", {
    text: Type.String(),
    ...callAndAttempt,
  }),
  'thinking.delta': event('thinking.delta', 'Live only: a piece of extended thinking', {
    text: Type.String(),
    ...callAndAttempt,
  }),
  message: event('message', "The model's text of one round, whole", { text: Type.String() }),
  'tool.start': event('tool.start', 'A tool call begins', {
    name: Type.String(),
    args: Type.Unknown(),
    callId: Type.String(),
    ...skillCall,
    input: Type.Optional(
      Type.Unknown({ description: "Skill calls: invoke_skill's {task, params}, load_skill's input" }),
    ),
    ...toolOrigin,
  }),
  'tool.end': event(
    'tool.end',
    "A tool call's result, as the model sees it; a skill text the model was given, by reference",
    {
      name: Type.String(),
      result: Type.Unknown({
        description:
          'The result as the model sees it; for a successful load_skill or load_subskill, a SkillContentReference; for a call a cancel cut (which the model never sees), {"cancelled": "turn cancelled"}',
      }),
      callId: Type.String(),
      isError: Type.Boolean(),
      ...skillCall,
      ...toolOrigin,
    },
  ),
  'checkpoint.requested': event('checkpoint.requested', 'The turn waits for a human', {
    checkpoint: PendingCheckpoint,
  }),
  'checkpoint.resolved': event('checkpoint.resolved', 'A decision was accepted', {
    checkpointId: Type.String(),
    action: CheckpointAction,
    by: Type.String(),
  }),
  'checkpoint.expired': event('checkpoint.expired', 'Nobody answered before expiresAt', {
    checkpointId: Type.String(),
  }),
  step: event('step', 'The step orchestrator moved', {
    skill: Type.String(),
    step: Type.Union([Type.String(), Type.Null()], { description: 'The last step taken; null right after loading' }),
    remaining: Type.Array(Type.String(), { description: 'The shortest list of steps that completes the plan' }),
  }),
  artifact: event('artifact', "A structured output: a skill's declared output, validated", {
    name: Type.String({ description: 'The skill whose output it is' }),
    mimeType: Type.String(),
    data: Type.Unknown(),
    callId: Type.Optional(Type.String({ description: 'The submit_output or invoke_skill call that produced it' })),
  }),
  done: event('done', 'Terminal: the turn completed with this answer', { output: Type.String() }),
  error: event('error', 'Terminal: the turn failed', { code: Type.String(), message: Type.String() }),
  cancelled: event('cancelled', 'Terminal: the turn was cancelled', { reason: Type.String() }),
};

export const TurnEventBody = Type.Union(Object.values(turnEventSchemas));
export type TurnEventBody = Static<typeof TurnEventBody>;

/** Sent by the API's streams, never logged: a retried model call starts its text again. */
export const MessageResetEvent = event(
  'message.reset',
  'Live only: drop the partial text of this model call; its retry streams again',
  {
    call: Type.String(),
    attempt: Type.Integer(),
  },
);
export type MessageResetEvent = Static<typeof MessageResetEvent>;
