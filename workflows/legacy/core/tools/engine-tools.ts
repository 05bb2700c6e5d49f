import { checkpointToolDefinition } from '../checkpoints';
import type { ToolDefinition } from '../messages';
import { skillToolDefinitions } from '../skills/tool-definitions';
import { humanApprovalToolName, SkillToolName } from '../skills/tool-names';
import type { SkillManifest } from '../skills/types';
import type { ToolInputSchema, ToolSpec } from './types';

/**
 * The engine's own tools, described like any other tool. They are offered in every turn, need no grant, and run in
 * workflow code (docs/tools.md says why): the skill tools serve the turn's pinned skills (an activity pins a skill the
 * first time it is loaded, then every call is a lookup), and request_human_approval is a durable wait for a human.
 */
export const engineToolCategory: Record<string, string> = {
  [SkillToolName.loadSkill]: 'skill',
  [SkillToolName.loadSubskill]: 'skill',
  [SkillToolName.readFile]: 'skill',
  [SkillToolName.listSkills]: 'skill',
  [SkillToolName.invokeSkill]: 'skill',
  [SkillToolName.submitOutput]: 'skill',
  [humanApprovalToolName]: 'hitl',
};

export function engineToolSpec(
  definition: ToolDefinition,
  category: string,
  runsIn: ToolSpec['runsIn'] = 'workflow',
): ToolSpec {
  return {
    name: definition.name,
    description: definition.description,
    category,
    inputSchema: definition.input_schema as ToolInputSchema,
    source: 'engine',
    runsIn,
    idempotent: true,
    needsApproval: false,
  };
}

/** The engine's tools for a turn whose catalog holds these skills (skill names are an enum of the catalog). */
export function engineToolSpecs(skills: Pick<SkillManifest, 'name' | 'category'>[]): ToolSpec[] {
  return [...skillToolDefinitions(skills), checkpointToolDefinition].map((definition) =>
    engineToolSpec(definition, engineToolCategory[definition.name]),
  );
}

/** What the model is given for a tool: its name, description and input schema. */
export function toolDefinitionOf(spec: ToolSpec): ToolDefinition {
  return {
    name: spec.name,
    description: spec.description,
    input_schema: spec.inputSchema as ToolDefinition['input_schema'],
  };
}

/** The idempotency key of one call of a non-idempotent tool: the same for every attempt of its activity. */
export function idempotencyKeyOf(workflowId: string, callId: string): string {
  return `skillflow:${workflowId}:${callId}`;
}
