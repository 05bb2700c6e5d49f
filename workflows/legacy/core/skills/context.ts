import type { TextBlock } from '../messages';
import { humanApprovalToolName, SkillToolName } from './tool-names';
import type { SkillManifest } from './types';

type CatalogEntry = Pick<SkillManifest, 'name' | 'description'>;

/** How the model must treat skills; part of the skill catalog block. */
export const skillRules = [
  `- When a request matches a skill, call ${SkillToolName.loadSkill} with its name before anything else, then follow the skill's instructions in order.`,
  `- Load each subskill with ${SkillToolName.loadSubskill} when the skill reaches it, and act on it only after it is loaded. Read the files a skill mentions with ${SkillToolName.readFile}.`,
  '- Never invent what a subskill would produce (questions, grades, analyses, reports) and never invent a routing decision: produce outputs only by following the loaded instructions on real inputs.',
  `- When a skill asks for a human checkpoint, call ${humanApprovalToolName} and wait: the human's answer comes back as its tool result. Never assume an approval, an answer or a choice.`,
  '- If a tool result says a step is not allowed yet, do what it says is allowed instead.',
  `- To have a skill do a self-contained task and hand back its result, call ${SkillToolName.invokeSkill} with the skill, the task and its parameters: it runs on its own, sees only what you pass, and returns its output.`,
  `- When a loaded skill declares an Output schema, hand in its output with ${SkillToolName.submitOutput} when its instructions say so, before your final answer.`,
].join('\n');

/** The skill catalog block: names and descriptions only, then the rules; null when there are no skills. */
export function skillCatalogText(skills: CatalogEntry[]): string | null {
  if (skills.length === 0) return null;
  const lines = skills.map((skill) => `- ${skill.name}: ${skill.description.replace(/\s+/g, ' ').trim()}`);
  return [
    '# Skills',
    '',
    'Skills available to you (name: description):',
    ...lines,
    '',
    'Rules for skills:',
    skillRules,
  ].join('\n');
}

/** System prompt blocks of a turn: the base agent prompt, then the skill catalog as a block of its own. */
export function buildSystemPrompt(input: { basePrompt: string; skills: CatalogEntry[] }): TextBlock[] {
  const blocks: TextBlock[] = [{ type: 'text', text: input.basePrompt }];
  const catalog = skillCatalogText(input.skills);
  if (catalog !== null) blocks.push({ type: 'text', text: catalog });
  return blocks;
}
