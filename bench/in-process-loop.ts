import Anthropic from '@anthropic-ai/sdk';
import type { MessageStreamParams } from '@anthropic-ai/sdk/resources';
import { withCacheBreakpoints } from '../core/cache-control';
import {
  toolUsesOf,
  type ChatMessage,
  type ContentBlock,
  type ToolResultBlock,
  type ToolUseBlock,
} from '../core/messages';
import { basePrompt } from '../core/prompts';
import {
  buildSystemPrompt,
  humanApprovalToolName,
  loadSkillResult,
  loadSubskillResult,
  pinSkill,
  SkillToolName,
  emptySkillTurnState,
  type SkillTurnState,
} from '../core/skills';
import { engineToolSpecs, toolDefinitionOf } from '../core/tools';
import { SkillRegistry } from '../lib/skills/registry';
import { examDecision } from '../test/support/exam-script';

/**
 * The baseline of the rounds benchmark: the plainest agent loop a developer would write in one process, with the
 * Anthropic SDK, the same system prompt, the same tool definitions and the same skill contents as a turn, against the
 * same fake model and script. It keeps the conversation in memory, streams each response as the model activity does,
 * and answers each tool call at once (a checkpoint with the benchmark human's decision). No durability, no policy.
 */
export interface LoopDeps {
  baseURL: string;
  skillsDir: string;
  dataDir: string;
}

export async function createInProcessLoop(deps: LoopDeps) {
  const client = new Anthropic({ apiKey: 'bench-loop-key', baseURL: deps.baseURL, maxRetries: 0 });
  const registry = new SkillRegistry({ skillsDir: deps.skillsDir, storeDir: `${deps.dataDir}/loop-skill-store` });
  const catalog = await registry.catalog();
  const system = buildSystemPrompt({ basePrompt, skills: catalog.skills });
  const tools = engineToolSpecs(catalog.skills).map(toolDefinitionOf);

  async function answer(call: ToolUseBlock, pinned: { state: SkillTurnState }): Promise<ToolResultBlock> {
    const input = call.input as Record<string, unknown>;
    let content: string;
    if (call.name === SkillToolName.loadSkill) {
      const snapshot = await registry.snapshot(String(input.name));
      pinned.state = pinSkill(pinned.state, snapshot);
      content = loadSkillResult(snapshot).content;
    } else if (call.name === SkillToolName.loadSubskill) {
      content = loadSubskillResult(input, pinned.state).content;
    } else if (call.name === humanApprovalToolName) {
      content = JSON.stringify(
        examDecision({ name: String(input.checkpoint), options: (input.options as string[] | undefined) ?? null }),
      );
    } else {
      content = JSON.stringify({ accepted: true });
    }
    return { type: 'tool_result', tool_use_id: call.id, content };
  }

  /** Runs one conversation to its final answer; returns the number of model calls. */
  async function run(message: string, maxRounds: number): Promise<number> {
    const messages: ChatMessage[] = [{ role: 'user', content: message }];
    const pinned = { state: emptySkillTurnState() };
    for (let round = 1; round <= maxRounds; round++) {
      const marked = withCacheBreakpoints(system, tools, messages);
      const params: MessageStreamParams = {
        model: 'claude-bench',
        max_tokens: 1024,
        system: marked.system,
        tools: marked.tools,
        messages: marked.messages,
      };
      const stream = client.messages.stream(params);
      for await (const event of stream) void event;
      const response = await stream.finalMessage();
      const content = response.content as ContentBlock[];
      messages.push({ role: 'assistant', content });
      const calls = toolUsesOf(content);
      if (calls.length === 0) return round;
      const results: ToolResultBlock[] = [];
      for (const call of calls) results.push(await answer(call, pinned));
      messages.push({ role: 'user', content: results });
    }
    throw new Error(`the in-process loop did not finish within ${maxRounds} rounds`);
  }

  return { run };
}
