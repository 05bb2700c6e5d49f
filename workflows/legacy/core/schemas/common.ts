import { Type, type TSchema } from '@sinclair/typebox';

/**
 * The shapes that cross the API (turns, checkpoints, events) are defined once, here, as TypeBox schemas: core's
 * TypeScript types are their `Static` types, and the API validates and documents with the same objects. Workflow code
 * imports only the types, so these schemas never enter the workflow bundle.
 */

export const Timestamp = Type.String({ format: 'date-time' });

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** Skill names as the Agent Skills spec has them (core/skills/names.ts checks the same rule in code). */
export const SkillName = Type.String({
  pattern: '^[a-z0-9](?:[a-z0-9]|-(?!-)){0,62}[a-z0-9]?$',
  maxLength: 64,
  description: 'Skill name',
});
