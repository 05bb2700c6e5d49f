import type { ChatMessage, TextBlock } from '../messages';
import type { HistoryMessage } from '../schemas/skill-runs';
import { parametersSchema } from './invocation';
import { loadSkillResult } from './tool-results';
import { SkillToolName } from './tool-names';
import type { SkillManifest, SkillSnapshot } from './types';

type Child = Pick<SkillManifest, 'name' | 'description' | 'parameters'>;

export interface SkillRunPromptInput {
  basePrompt: string;
  snapshot: SkillSnapshot;
  /** The run's parameters, validated and defaulted. */
  params: Record<string, unknown>;
  depth: number;
  /** The skills it may invoke (its children); empty when it has none, or when the depth cap stops it. */
  children: Child[];
  /** Why it invokes nothing although it has children: the depth cap. */
  depthCapped: boolean;
}

/**
 * A skill run's system prompt (seed 003): the base agent prompt, then one block with the skill's instructions (as
 * load_skill serves them: body, subskills, resources, plan, parameters and output schema), the parameters of this run,
 * the skills it may invoke (name and description) and what its final answer must be.
 */
export function skillRunSystemPrompt(input: SkillRunPromptInput): TextBlock[] {
  const { snapshot, params, depth, children } = input;
  const { manifest } = snapshot;
  const lines = [
    `# Skill run: ${manifest.name} (depth ${depth})`,
    '',
    `Another agent handed you a task to carry out with the skill ${manifest.name}. The user message is that task; you see ` +
      'nothing else of the conversation it came from, and your final answer is returned to it.',
    '',
    loadSkillResult(snapshot).content,
    '',
    `Parameters of this run (validated, declared defaults filled in): ${JSON.stringify(params)}`,
    '',
    ...invocableLines(children, input.depthCapped),
    '',
    manifest.output.length > 0
      ? "Your final answer is this run's output: one JSON object that matches the Output schema above, and nothing else. " +
        'It is checked against the schema; an answer that does not match gets one chance to be corrected, then the run fails.'
      : "Your final answer is this run's output, as text: it is returned to the agent that invoked the skill.",
  ];
  return [
    { type: 'text', text: input.basePrompt },
    { type: 'text', text: lines.join('\n') },
  ];
}

function invocableLines(children: Child[], depthCapped: boolean): string[] {
  if (children.length === 0) {
    return [
      depthCapped
        ? 'Skills nest no deeper than this: this run invokes no other skills.'
        : 'This skill invokes no other skills.',
    ];
  }
  return [
    `Skills you may invoke with ${SkillToolName.invokeSkill} (name: description; parameters as JSON Schema):`,
    ...children.map(
      (child) =>
        `- ${child.name}: ${child.description.replace(/\s+/g, ' ').trim()} Parameters: ${JSON.stringify(parametersSchema(child))}`,
    ),
  ];
}

/** A skill run's conversation (seed 003): the history it was handed, then the task as the user's message. */
export function skillRunMessages(history: HistoryMessage[], task: string): ChatMessage[] {
  return [
    ...history.map((message) => ({ role: message.role, content: message.content })),
    { role: 'user', content: task },
  ];
}
