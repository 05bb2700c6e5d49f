import { compactMessages, estimateTokens } from '../core/compaction';
import type { ChatMessage } from '../core/messages';
import { digestOf } from '../core/transcript';

const round = (id: string, body: string): ChatMessage[] => [
  {
    role: 'assistant',
    content: [
      { type: 'text', text: `calling ${id}` },
      { type: 'tool_use', id, name: 'load_subskill', input: { subskill: id } },
    ],
  },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: body }] },
];

describe('compaction', () => {
  const big = 'x'.repeat(4_000);
  const messages: ChatMessage[] = [
    { role: 'user', content: 'start the exam' },
    ...round('t1', big),
    ...round('t2', big),
    ...round('t3', big),
    ...round('t4', big),
  ];

  it('stubs settled results oldest first until the target is met, keeping protected and recent ones', () => {
    const result = compactMessages(messages, {
      targetTokens: 2_000,
      keepRecentMessages: 2,
      protectedToolUseIds: new Set(['t2']),
      charsPerToken: 4,
    });
    const contents = result.messages
      .filter((m) => m.role === 'user' && typeof m.content !== 'string')
      .map((m) => (m.content as Array<{ content: string }>)[0].content);
    expect(contents[0]).toMatch(/^\[settled\] The result of this load_subskill call was used and then removed/);
    expect(contents[1]).toBe(big);
    expect(contents[2]).toMatch(/^\[settled\]/);
    expect(contents[3]).toBe(big);
    expect(result.stubbed).toBe(2);
    expect(result.estimatedTokens).toBe(estimateTokens(result.messages, 4));
    expect(result.messages[0]).toEqual({ role: 'user', content: 'start the exam' });
    expect(result.messages.filter((m) => m.role === 'assistant')).toEqual(
      messages.filter((m) => m.role === 'assistant'),
    );
  });

  it('leaves a conversation under its target untouched, and never mutates the input', () => {
    const before = JSON.stringify(messages);
    expect(
      compactMessages(messages, {
        targetTokens: 1_000_000,
        keepRecentMessages: 2,
        protectedToolUseIds: new Set(),
        charsPerToken: 4,
      }).stubbed,
    ).toBe(0);
    compactMessages(messages, {
      targetTokens: 0,
      keepRecentMessages: 0,
      protectedToolUseIds: new Set(),
      charsPerToken: 4,
    });
    expect(JSON.stringify(messages)).toBe(before);
  });
});

describe('transcript digests', () => {
  it('are deterministic and change with any edit', () => {
    const a: ChatMessage[] = [{ role: 'user', content: 'hello' }];
    expect(digestOf(a)).toBe(digestOf([{ role: 'user', content: 'hello' }]));
    expect(digestOf(a)).toMatch(/^[0-9a-f]{16}$/);
    expect(digestOf(a)).not.toBe(digestOf([{ role: 'user', content: 'hellp' }]));
    expect(digestOf([])).not.toBe(digestOf([{ role: 'user', content: '' }]));
  });
});
