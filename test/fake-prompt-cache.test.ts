import { PromptCache } from './support/fake-prompt-cache';
import type { MessagesRequestBody } from './support/fake-anthropic';

/** The fake model's prompt-cache usage, which the benchmark's cache-read ratio is computed from. */
const ephemeral = { type: 'ephemeral' };
const long = (tag: string, chars: number) => `${tag}:${'x'.repeat(chars)}`;
const system = [{ type: 'text', text: long('system', 8000), cache_control: ephemeral }];

function request(messages: Array<{ role: string; text: string }>, markLast = true): MessagesRequestBody {
  return {
    model: 'm',
    max_tokens: 10,
    system,
    messages: messages.map((message, i) => ({
      role: message.role,
      content: [
        {
          type: 'text',
          text: message.text,
          ...(markLast && i === messages.length - 1 ? { cache_control: ephemeral } : {}),
        },
      ],
    })),
  };
}

describe('fake prompt cache', () => {
  test('the first request writes its prefixes, the next one reads what the first wrote', () => {
    const cache = new PromptCache({ minTokens: 1024 });
    const first = cache.usageOf(request([{ role: 'user', text: long('question', 400) }]));
    expect(first.cache_read_input_tokens).toBe(0);
    expect(first.cache_creation_input_tokens).toBeGreaterThan(2000);
    expect(first.input_tokens).toBe(0);
    const total = first.cache_creation_input_tokens;
    const second = cache.usageOf(
      request([
        { role: 'user', text: long('question', 400) },
        { role: 'assistant', text: 'answer' },
        { role: 'user', text: long('more', 400) },
      ]),
    );
    expect(second.cache_read_input_tokens).toBe(total);
    expect(second.cache_creation_input_tokens).toBeGreaterThan(100);
    expect(second.input_tokens).toBe(0);
  });

  test('a changed prefix reads nothing, and a prefix under the minimum is never cached', () => {
    const cache = new PromptCache({ minTokens: 1024 });
    cache.usageOf(request([{ role: 'user', text: 'a' }]));
    const changed = cache.usageOf({
      ...request([{ role: 'user', text: 'a' }]),
      system: [{ type: 'text', text: long('other', 8000), cache_control: ephemeral }],
    });
    expect(changed.cache_read_input_tokens).toBe(0);
    const small = new PromptCache({ minTokens: 100_000 });
    small.usageOf(request([{ role: 'user', text: 'a' }]));
    const again = small.usageOf(request([{ role: 'user', text: 'a' }]));
    expect(again).toEqual({
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
      input_tokens: expect.any(Number) as number,
    });
  });

  test('without a breakpoint after the messages, only the marked system prefix is read', () => {
    const cache = new PromptCache();
    const first = cache.usageOf(request([{ role: 'user', text: long('q', 400) }], false));
    const second = cache.usageOf(request([{ role: 'user', text: long('q', 400) }], false));
    expect(second.cache_read_input_tokens).toBe(first.cache_creation_input_tokens);
    expect(second.input_tokens).toBe(first.input_tokens);
  });
});
