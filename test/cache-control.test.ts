import { withCacheBreakpoints } from '../core/cache-control';
import type { ChatMessage, ToolDefinition } from '../core/messages';

const tool = (name: string): ToolDefinition => ({ name, description: name, input_schema: { type: 'object' } });
const ephemeral = { type: 'ephemeral' };

describe('prompt-cache breakpoints', () => {
  const messages: ChatMessage[] = [
    { role: 'user', content: 'first' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'a', input: {} }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] },
  ];

  it('marks the end of the system prompt (which covers the tools) and the last block of the conversation', () => {
    const marked = withCacheBreakpoints(
      [
        { type: 'text', text: 'base' },
        { type: 'text', text: 'catalog' },
      ],
      [tool('a'), tool('b')],
      messages,
    );
    expect(marked.system).toEqual([
      { type: 'text', text: 'base' },
      { type: 'text', text: 'catalog', cache_control: ephemeral },
    ]);
    expect(marked.tools).toEqual([tool('a'), tool('b')]);
    expect(marked.messages.slice(0, 2)).toEqual(messages.slice(0, 2));
    expect(marked.messages[2]).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok', cache_control: ephemeral }],
    });
    expect(messages[2]).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] });
  });

  it('marks the last tool when there is no system prompt, and never a thinking block', () => {
    const marked = withCacheBreakpoints(
      [],
      [tool('a'), tool('b')],
      [{ role: 'assistant', content: [{ type: 'thinking', thinking: 'x', signature: 's' }] }],
    );
    expect(marked.tools).toEqual([tool('a'), { ...tool('b'), cache_control: ephemeral }]);
    expect(marked.messages).toEqual([
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'x', signature: 's' }] },
    ]);
  });
});
