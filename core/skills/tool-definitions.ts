import type { ToolDefinition } from '../messages';
import { SkillToolName } from './tool-names';
import type { SkillManifest } from './types';

type Known = Pick<SkillManifest, 'name' | 'category'>;

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
      description: "Load one subskill of a loaded skill, when the skill's instructions reach it. Returns the subskill's instructions.",
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
          skill: { type: 'string', description: 'The loaded skill; defaults to the most recently loaded one.', ...enumOf(names) },
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
        properties: { category: { type: 'string', description: 'Only skills of this category.', ...enumOf(categories) } },
        additionalProperties: false,
      },
    },
  ];
}
