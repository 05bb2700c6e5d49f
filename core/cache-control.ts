import type { ChatMessage, ContentBlock, TextBlock, ToolDefinition } from './messages';

/**
 * Prompt-cache breakpoints: one after the stable prefix (tools and system, which end with the skill catalog) and one
 * that moves with the conversation's last block. Returns copies; the turn's own messages stay unmarked.
 */
export function withCacheBreakpoints(system: TextBlock[], tools: ToolDefinition[], messages: ChatMessage[]) {
  const ephemeral = { type: 'ephemeral' as const };
  const markedSystem = system.map((block, index) =>
    index === system.length - 1 ? { ...block, cache_control: ephemeral } : block,
  );
  // Tools come before the system prompt in the cached prefix: a system breakpoint covers them; without one, mark the tools.
  const markTools = system.length === 0 && tools.length > 0;
  const markedTools = markTools
    ? tools.map((tool, index) => (index === tools.length - 1 ? { ...tool, cache_control: ephemeral } : tool))
    : tools;
  const last = messages.length - 1;
  const markedMessages = messages.map((message, index) => (index === last ? markLastBlock(message) : message));
  return { system: markedSystem, tools: markedTools, messages: markedMessages };
}

function markLastBlock(message: ChatMessage): ChatMessage {
  const blocks: ContentBlock[] =
    typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
  if (blocks.length === 0) return message;
  const lastBlock = blocks[blocks.length - 1];
  if (lastBlock.type !== 'text' && lastBlock.type !== 'tool_result') return message;
  return { ...message, content: [...blocks.slice(0, -1), { ...lastBlock, cache_control: { type: 'ephemeral' } }] };
}
