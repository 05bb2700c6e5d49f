import type { ChatMessage, ContentBlock, ToolResultBlock } from './messages';

export interface CompactionOptions {
  /** Compact to at most this many estimated tokens. */
  targetTokens: number;
  /** The newest messages are never touched: the round in progress and the one before it. */
  keepRecentMessages: number;
  /** Tool results that must stay whole: the current step's instructions. */
  protectedToolUseIds: ReadonlySet<string>;
  charsPerToken: number;
}

export interface CompactionResult {
  messages: ChatMessage[];
  stubbed: number;
  estimatedTokens: number;
}

const stubPrefix = '[settled]';

export function estimateTokens(value: unknown, charsPerToken: number): number {
  return Math.ceil(JSON.stringify(value).length / charsPerToken);
}

function toolNames(messages: ChatMessage[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const message of messages) {
    if (typeof message.content === 'string') continue;
    for (const block of message.content) if (block.type === 'tool_use') names.set(block.id, block.name);
  }
  return names;
}

function stub(block: ToolResultBlock, toolName: string): ToolResultBlock {
  const content = `${stubPrefix} The result of this ${toolName} call was used and then removed to keep the conversation within the model's context. Call ${toolName} again if you need it.`;
  return {
    type: 'tool_result',
    tool_use_id: block.tool_use_id,
    content,
    ...(block.is_error ? { is_error: true } : {}),
  };
}

const isStub = (block: ToolResultBlock) => typeof block.content === 'string' && block.content.startsWith(stubPrefix);

/**
 * Replaces settled tool results, oldest first, with short stubs until the conversation fits the target. The
 * structure stays valid for the API (every tool_use keeps its tool_result); the user's words, the assistant's
 * answers and protected results are kept.
 */
export function compactMessages(messages: ChatMessage[], options: CompactionOptions): CompactionResult {
  const names = toolNames(messages);
  const result = messages.map((message) => ({ ...message }));
  let estimated = estimateTokens(result, options.charsPerToken);
  let stubbed = 0;
  const lastCompactable = result.length - options.keepRecentMessages;
  for (let index = 0; index < lastCompactable && estimated > options.targetTokens; index++) {
    const message = result[index];
    if (message.role !== 'user' || typeof message.content === 'string') continue;
    let changed = false;
    const content: ContentBlock[] = message.content.map((block) => {
      if (block.type !== 'tool_result' || isStub(block) || options.protectedToolUseIds.has(block.tool_use_id))
        return block;
      changed = true;
      stubbed++;
      return stub(block, names.get(block.tool_use_id) ?? 'tool');
    });
    if (changed) {
      result[index] = { role: 'user', content };
      estimated = estimateTokens(result, options.charsPerToken);
    }
  }
  return { messages: result, stubbed, estimatedTokens: estimated };
}
