import { durationPattern } from './durations';
import { fieldKeys } from './field-specs';
import {
  checkpointKeys,
  deadlineKeys,
  freeCheckpointKeys,
  freeCheckpointPolicies,
  limitKeys,
  sidecarKeys,
  stepLimitKeys,
} from './sidecar';
import { checkpointKinds, deadlineUnits, fieldTypes, onTimeoutPolicies } from './types';
import { grantPattern } from '../tools/grants';

/**
 * The JSON Schema of `skillflow.yaml` for editors (completion, hovers, early red squiggles), generated from the
 * constants the validator itself checks against, so the two cannot drift: `docs/skillflow.schema.json` is this
 * object, and a test keeps the file equal to it. The validator stays the authority: it also checks what a schema
 * cannot say (references to the plan, defaults against bounds, cycles between skills).
 */
export function sidecarJsonSchema(): Record<string, unknown> {
  const strictObject = (
    keys: readonly string[],
    properties: Record<string, unknown>,
    extra: Record<string, unknown> = {},
  ) => {
    for (const key of keys) if (!(key in properties)) throw new Error(`sidecar schema: no schema for ${key}`);
    return { type: 'object', additionalProperties: false, properties, ...extra };
  };
  const duration = { type: 'string', pattern: durationPattern, description: 'A duration: 90s, 30m, 2h, 1d, 1h30m' };
  const snakeName = '^[a-z][a-z0-9_]*$';
  const skillName = '^[a-z0-9]+(-[a-z0-9]+)*$';
  /** Skill names (children, route targets): Unicode lowercase letters and digits, single hyphens (names.ts isSkillName). */
  const specSkillName = '^[\\p{Ll}\\p{Lo}\\p{Lm}\\p{N}]+(-[\\p{Ll}\\p{Lo}\\p{Lm}\\p{N}]+)*$';
  const scalar = { type: ['string', 'number'] };
  const field = strictObject(
    fieldKeys,
    {
      type: { enum: [...fieldTypes], description: "The value's type" },
      description: { type: 'string', minLength: 1, description: 'What the field holds; the model reads it' },
      required: { type: 'boolean', description: 'Default: required unless a default is given' },
      default: { description: 'A valid value of the field' },
      enum: {
        type: 'array',
        minItems: 1,
        uniqueItems: true,
        items: scalar,
        description: 'Allowed values (for arrays: allowed items)',
      },
      items: { enum: fieldTypes.filter((type) => type !== 'array'), description: 'Item type of an array' },
      minimum: { type: 'number' },
      maximum: { type: 'number' },
    },
    { required: ['type', 'description'] },
  );
  const fields = {
    type: 'object',
    propertyNames: { pattern: snakeName },
    additionalProperties: { $ref: '#/$defs/field' },
  };
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'skillflow.yaml',
    description:
      'Engine data of a skillflow skill, beside its SKILL.md (docs/skills.md, section 4). Generated from core/skills/sidecar-schema.ts.',
    ...strictObject(sidecarKeys, {
      parameters: { ...fields, description: 'Typed inputs of the skill' },
      output: { ...fields, description: "The shape of the skill's result" },
      checkpoints: {
        type: 'object',
        description: 'Policies of named checkpoints',
        propertyNames: { pattern: snakeName },
        additionalProperties: {
          anyOf: [
            { type: 'null' },
            strictObject(checkpointKeys, {
              kind: { enum: [...checkpointKinds], default: 'approval' },
              ttl: { ...duration, description: 'How long it waits; absent: as long as the turn lives' },
              'on-timeout': { enum: [...onTimeoutPolicies], default: 'cancel' },
              params: { ...fields, description: 'The parameters the model proposes and the human may override' },
              routes: {
                type: 'object',
                description: "A routing checkpoint: the human's choice gates the next skill (a skill name, or stop)",
                propertyNames: { anyOf: [{ const: 'stop' }, { pattern: specSkillName }] },
                additionalProperties: { type: 'string', minLength: 1 },
                minProperties: 2,
              },
            }),
          ],
        },
      },
      'free-checkpoints': strictObject(
        freeCheckpointKeys,
        { ttl: duration, 'on-timeout': { enum: [...freeCheckpointPolicies] } },
        {
          description: 'Policy for checkpoints the skill does not declare',
        },
      ),
      deadlines: {
        type: 'array',
        items: strictObject(
          deadlineKeys,
          {
            from: {
              type: 'string',
              pattern: '^[a-z][a-z0-9_]*\\.[a-z][a-z0-9_]*$',
              description: 'CHECKPOINT.PARAM, a numeric param of a plan checkpoint',
            },
            unit: { enum: [...deadlineUnits] },
            after: { ...duration, description: 'A fixed time from when the skill is loaded' },
            'jump-to': { type: 'string', pattern: skillName, description: 'The plan step to go to when time is up' },
          },
          { required: ['jump-to'], oneOf: [{ required: ['from', 'unit'] }, { required: ['after'] }] },
        ),
      },
      steps: {
        type: 'object',
        description: 'Per-step limits',
        propertyNames: { pattern: skillName },
        additionalProperties: strictObject(
          stepLimitKeys,
          { 'max-runs': { type: 'integer', minimum: 1 } },
          { required: ['max-runs'] },
        ),
      },
      limits: strictObject(limitKeys, {
        'max-iterations': { type: 'integer', minimum: 1, maximum: 1000 },
        timeout: duration,
      }),
      children: {
        type: 'array',
        uniqueItems: true,
        items: { type: 'string', pattern: specSkillName },
        description: 'Skills this skill may load while active',
      },
      tools: {
        type: 'array',
        uniqueItems: true,
        items: { type: 'string', pattern: grantPattern },
        description:
          'Registered tools the skill may use while it is active: tool names, category:NAME, mcp:SERVER (docs/tools.md)',
      },
    }),
    $defs: { field },
  };
}
