import { Type, type Static } from '@sinclair/typebox';
import { turnStatuses } from '../turn-status';
import { SkillName } from './common';

export const TurnStatus = Type.Union(turnStatuses.map((status) => Type.Literal(status)));

export const Usage = Type.Object({
  inputTokens: Type.Integer(),
  outputTokens: Type.Integer(),
  cacheReadInputTokens: Type.Integer(),
  cacheCreationInputTokens: Type.Integer(),
});
export type Usage = Static<typeof Usage>;

export const TurnError = Type.Object({ code: Type.String(), message: Type.String() });
export type TurnError = Static<typeof TurnError>;

/** What a user sends to start a turn (the body of `POST /v1/sessions/:id/turns`). */
export const TurnRequest = Type.Object(
  {
    message: Type.String({ minLength: 1, description: 'What the user says' }),
    skill: Type.Optional(SkillName),
    params: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description:
          "With skill: the skill's parameters (GET /v1/skills/:name), validated before the turn starts; its checkpoints propose them",
      }),
    ),
    supersede: Type.Optional(Type.Boolean({ description: "Cancel the session's running or waiting turn first" })),
  },
  { additionalProperties: false },
);
export type TurnRequest = Static<typeof TurnRequest>;
