export * from './common';
export * from './turns';
export * from './checkpoints';
export * from './sessions';
export * from './streams';
export * from './skills';
export * from './events';
export * from './links';

import { ErrorBody } from './common';
import { SessionSummary, SessionView } from './sessions';
import { SkillDetail, SkillSummary } from './skills';
import { eventComponents, TurnEvent } from './events';
import { AnswerLink } from './links';
import { Artifact, SkillExecution, StartedTurn, TurnSummary, TurnView } from './turns';

/** Schemas with an `$id`: added to the app once, referenced by routes, listed as components in the OpenAPI document. */
export const sharedSchemas = [
  ErrorBody,
  StartedTurn,
  SkillExecution,
  Artifact,
  TurnView,
  TurnSummary,
  ...eventComponents,
  TurnEvent,
  SessionSummary,
  SessionView,
  SkillSummary,
  SkillDetail,
  AnswerLink,
];
