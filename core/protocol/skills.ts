import { Type } from '@sinclair/typebox';
import { FieldSpec } from '../schemas/skill-runs';
import { Nullable, SkillName } from '../schemas/common';

export const SkillListQuery = Type.Object({
  category: Type.Optional(Type.String({ maxLength: 64, description: 'Only skills of this category' })),
});

export const SkillParams = Type.Object({ name: SkillName });

export { FieldSpec };

export const SkillSummary = Type.Object(
  {
    name: Type.String(),
    description: Type.String(),
    category: Nullable(Type.String()),
    tags: Type.Array(Type.String()),
    version: Nullable(Type.String()),
    parameters: Type.Array(FieldSpec),
    steps: Type.Array(Type.String({ description: "The plan's steps, in order of first appearance" })),
    checkpoints: Type.Array(Type.String()),
  },
  { $id: 'SkillSummary' },
);

export const SkillCatalogPage = Type.Object({ skills: Type.Array(Type.Ref(SkillSummary)) });

export const SkillDetail = Type.Object(
  {
    ...SkillSummary.properties,
    license: Nullable(Type.String()),
    compatibility: Nullable(Type.String()),
    metadata: Type.Record(Type.String(), Type.String()),
    plan: Nullable(Type.String({ description: 'The plan as written' })),
    output: Type.Array(FieldSpec),
    checkpointSpecs: Type.Array(
      Type.Object({
        name: Type.String(),
        kind: Type.String(),
        ttlMs: Nullable(Type.Integer()),
        onTimeout: Type.String(),
        params: Type.Array(FieldSpec),
        routes: Type.Array(Type.Object({ id: Type.String(), label: Type.String(), skill: Nullable(Type.String()) })),
      }),
    ),
    children: Type.Array(Type.String()),
    subskills: Type.Array(Type.String()),
    resources: Type.Array(Type.String()),
  },
  { $id: 'Skill' },
);
