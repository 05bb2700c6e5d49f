import type { ToolDefinition } from '../messages';
import { SkillToolName } from './tool-names';
import type { SkillManifest } from './types';

type Known = Pick<SkillManifest, 'name' | 'category'>;

/** Most messages an invocation's `history` may hold, and most characters of its task or of one message. */
export const invocationLimits = { historyMessages: 50, textChars: 100_000 } as const;

const enumOf = (values: string[]) => (values.length > 0 ? { enum: values } : {});

/** The model-facing skill tools; skill names are an enum of the skills known to the turn. */
export function skillToolDefinitions(skills: Known[]): ToolDefinition[] {
  const names = skills.map((s) => s.name);
  const categories = [...new Set(skills.flatMap((s) => (s.category ? [s.category] : [])))].sort();
  return [
    {
      name: SkillToolName.loadSkill,
      description:
        "Load a skill before following it. Returns the skill's instructions, the names of its subskills and resource files, and which plan steps are allowed next.",
      input_schema: {
        type: 'object',
        properties: { name: { type: 'string', description: 'The skill to load.', ...enumOf(names) } },
        required: ['name'],
        additionalProperties: false,
      },
    },
    {
      name: SkillToolName.loadSubskill,
      description:
        "Load one subskill of a loaded skill, when the skill's instructions reach it. Returns the subskill's instructions.",
      input_schema: {
        type: 'object',
        properties: {
          skill: { type: 'string', description: 'The loaded skill the subskill belongs to.', ...enumOf(names) },
          subskill: { type: 'string', description: 'The subskill name, as listed by load_skill.' },
        },
        required: ['skill', 'subskill'],
        additionalProperties: false,
      },
    },
    {
      name: SkillToolName.readFile,
      description:
        'Read a resource file of a loaded skill, by its path relative to the skill folder as listed by load_skill. Subskills are not files: use load_subskill.',
      input_schema: {
        type: 'object',
        properties: {
          path: { type: 'string', description: 'Path relative to the skill folder, e.g. references/guide.md.' },
          skill: {
            type: 'string',
            description: 'The loaded skill; defaults to the most recently loaded one.',
            ...enumOf(names),
          },
        },
        required: ['path'],
        additionalProperties: false,
      },
    },
    {
      name: SkillToolName.listSkills,
      description: 'List the available skills with their description, category and parameters.',
      input_schema: {
        type: 'object',
        properties: {
          category: { type: 'string', description: 'Only skills of this category.', ...enumOf(categories) },
        },
        additionalProperties: false,
      },
    },
  ];
}

/** invoke_skill: `skills` are the ones the caller may invoke (the catalog for a turn, a skill run's children). */
export function invokeSkillDefinition(skills: Known[]): ToolDefinition {
  return {
    name: SkillToolName.invokeSkill,
    description:
      'Run a skill on a task of its own and get its result back. The skill runs in a fresh conversation: it sees the task, ' +
      'the params and the history you pass, and nothing else of this conversation. Returns JSON {"skill_id", "output", ' +
      '"success"} (with "error" when it failed); output is the JSON the skill declares, or its answer as text.',
    input_schema: {
      type: 'object',
      properties: {
        skill: { type: 'string', description: 'The skill to run.', ...enumOf(skills.map((s) => s.name)) },
        task: {
          type: 'string',
          description: 'What the skill should do, self-contained: the skill sees nothing else of this conversation.',
        },
        params: {
          type: 'object',
          description:
            "The skill's parameters, as its Parameters schema declares them; declared defaults fill in the rest.",
        },
        history: {
          type: 'array',
          description: `Earlier messages the skill should know, oldest first (at most ${invocationLimits.historyMessages}): user and assistant text only, alternating, from a user message to an assistant message.`,
          items: {
            type: 'object',
            properties: { role: { type: 'string', enum: ['user', 'assistant'] }, content: { type: 'string' } },
            required: ['role', 'content'],
            additionalProperties: false,
          },
        },
      },
      required: ['skill', 'task'],
      additionalProperties: false,
    },
  };
}

export const submitOutputDefinition: ToolDefinition = {
  name: SkillToolName.submitOutput,
  description:
    'Hand in the structured output the loaded skill declares (the Output schema load_skill showed), when its instructions say so and ' +
    'before your final answer. The output is checked against the schema; an error result lists every problem to fix.',
  input_schema: {
    type: 'object',
    properties: { output: { type: 'object', description: "The output, matching the skill's Output schema." } },
    required: ['output'],
    additionalProperties: false,
  },
};
