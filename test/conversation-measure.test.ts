import type { ChatMessage } from '../core/messages';
import { ConversationMeasure, digestOf, elideRepeated, minRepeatedChars, restoreRepeated } from '../core/transcript';

/** The cached digest and JSON length must be exactly what the uncached functions say, whatever the loop does. */
const user = (text: string): ChatMessage => ({ role: 'user', content: text });
const assistant = (text: string): ChatMessage => ({ role: 'assistant', content: [{ type: 'text', text }] });

function check(measure: ConversationMeasure, messages: ChatMessage[]): void {
  expect(measure.digest(messages)).toBe(digestOf(messages));
  expect(measure.jsonLength(messages)).toBe(JSON.stringify(messages).length);
  for (let count = 0; count <= messages.length; count++)
    expect(measure.digest(messages, count)).toBe(digestOf(messages.slice(0, count)));
}

describe('digestOf', () => {
  // Workers and histories of older code name conversations by these digests: the values may never change.
  it.each([
    ['an empty conversation', [], '741638a5fb0ad1e1'],
    ['text beyond ASCII', 'héllo "quoted" ✓', '9563169ad89e2562'],
    ['a long message', [{ role: 'user', content: 'x'.repeat(1000) }], 'c32a36bfbfdd7577'],
    ['an object', { a: 1, b: [true, null] }, '0c1201ca02353833'],
  ])('%s has the digest it always had', (_name, value, digest) => {
    expect(digestOf(value)).toBe(digest);
  });
});

describe('ConversationMeasure', () => {
  test('an empty conversation, one message, and a conversation growing round by round', () => {
    const measure = new ConversationMeasure();
    const messages: ChatMessage[] = [];
    check(measure, messages);
    messages.push(user('héllo "quoted" ✓'));
    check(measure, messages);
    for (let round = 0; round < 5; round++) {
      messages.push(assistant(`answer ${round}`), user(`next ${round}`));
      check(measure, messages);
    }
  });

  test('a replaced last message, a compacted (new) array and a shorter conversation are measured afresh', () => {
    const measure = new ConversationMeasure();
    const messages = [user('a'), assistant('b'), user('c')];
    check(measure, messages);
    messages[2] = {
      role: 'user',
      content: [
        { type: 'text', text: 'c' },
        { type: 'text', text: 'guidance' },
      ],
    };
    check(measure, messages);
    const compacted = [messages[0], assistant('stub'), messages[2]];
    check(measure, compacted);
    check(measure, compacted.slice(0, 1));
    check(measure, messages);
  });
});

describe('repeated tool results', () => {
  const body = 'Subskill adaptive-difficulty. '.padEnd(minRepeatedChars + 10, 'x');
  const result = (id: string, content: string): ChatMessage => ({
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: id, content }],
  });
  const call = (id: string): ChatMessage => ({
    role: 'assistant',
    content: [{ type: 'tool_use', id, name: 'load_subskill', input: {} }],
  });

  test('a long result repeating an earlier one goes by digest, and the worker restores exactly the conversation', () => {
    const messages = [
      user('exam'),
      call('a'),
      result('a', body),
      call('b'),
      result('b', 'short'),
      call('c'),
      result('c', body),
    ];
    const measure = new ConversationMeasure();
    expect(measure.repeatedResults(messages, 3)).toEqual([{ message: 3, block: 0, digest: digestOf(body) }]);
    const repeated = measure.repeatedResults(messages, 3);
    const append = elideRepeated(messages.slice(3), repeated);
    expect(JSON.stringify(append)).not.toContain(body);
    expect(JSON.stringify(messages)).toContain(body);
    const restored = restoreRepeated([...messages.slice(0, 3), ...append], 3, repeated);
    expect(restored).toEqual(messages);
    expect(digestOf(restored)).toBe(digestOf(messages));
  });

  test('short results, first occurrences and results the worker cannot find are not elided, or refused', () => {
    const measure = new ConversationMeasure();
    const messages = [
      user('exam'),
      call('a'),
      result('a', 'short'),
      call('b'),
      result('b', 'short'),
      call('c'),
      result('c', body),
    ];
    expect(measure.repeatedResults(messages, 1)).toEqual([]);
    expect(
      restoreRepeated(messages, 5, [
        { message: 1, block: 0, digest: digestOf('not there'.padEnd(minRepeatedChars, 'y')) },
      ]),
    ).toBeUndefined();
  });

  test('after compaction replaced the earlier result, the repeat is sent whole', () => {
    const measure = new ConversationMeasure();
    const messages = [user('exam'), call('a'), result('a', body), call('b'), result('b', body)];
    expect(measure.repeatedResults(messages, 3)).toHaveLength(1);
    const compacted = [messages[0], messages[1], result('a', '[stub]'), messages[3], messages[4]];
    expect(measure.repeatedResults(compacted, 3)).toEqual([]);
  });
});

describe('partially repeated tool results (a subskill loaded again, with its run count)', () => {
  const body = 'Subskill adaptive-difficulty. '.padEnd(minRepeatedChars * 4, 'x');
  const loaded = (run: number) =>
    `${body}\n\nStep limit: adaptive-difficulty may run at most 60 times; this is run ${run}, ${60 - run} left.`;
  const result = (id: string, content: string): ChatMessage => ({
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: id, content }],
  });
  const call = (id: string): ChatMessage => ({
    role: 'assistant',
    content: [{ type: 'tool_use', id, name: 'load_subskill', input: {} }],
  });

  test.each([
    [
      "a result that begins as an earlier one goes as that one's prefix and its own ending",
      [loaded(1)],
      loaded(2),
      true,
    ],
    ['the latest earlier one is used', [loaded(1), loaded(2)], loaded(3), true],
    ['a result sharing less than half of itself is sent whole', [body.slice(0, minRepeatedChars + 5)], body, false],
    [
      'a result sharing fewer than minRepeatedChars characters is sent whole',
      ['z'.repeat(minRepeatedChars)],
      'z'.repeat(minRepeatedChars - 1) + 'y'.repeat(minRepeatedChars),
      false,
    ],
  ])('%s', (_name, earlier, latest, partial) => {
    const messages: ChatMessage[] = [user('exam')];
    earlier.forEach((content, n) => messages.push(call(`e${n}`), result(`e${n}`, content)));
    const from = messages.length;
    messages.push(call('last'), result('last', latest));
    const measure = new ConversationMeasure();
    const repeated = measure.repeatedResults(messages, from);
    if (!partial) {
      expect(repeated).toEqual([]);
      return;
    }
    const previous = earlier.at(-1)!;
    expect(repeated).toEqual([
      {
        message: 1,
        block: 0,
        digest: `partial:${digestOf(previous)}`,
        length: expect.any(Number),
        suffix: expect.any(String),
      },
    ]);
    expect(repeated[0].suffix!.length).toBeLessThan(40);
    const append = elideRepeated(messages.slice(from), repeated);
    expect(JSON.stringify(append).length).toBeLessThan(200);
    const restored = restoreRepeated([...messages.slice(0, from), ...append], from, repeated);
    expect(restored).toEqual(messages);
  });

  test('a partial repeat only names a result the worker holds before the delta, never one elided in it', () => {
    const messages = [
      user('exam'),
      call('a'),
      result('a', loaded(1)),
      call('b'),
      result('b', loaded(2)),
      call('c'),
      result('c', loaded(3)),
    ];
    const repeated = new ConversationMeasure().repeatedResults(messages, 3);
    expect(repeated.map((entry) => entry.digest)).toEqual([
      `partial:${digestOf(loaded(1))}`,
      `partial:${digestOf(loaded(1))}`,
    ]);
    const append = elideRepeated(messages.slice(3), repeated);
    expect(restoreRepeated([...messages.slice(0, 3), ...append], 3, repeated)).toEqual(messages);
  });

  test('a worker that knows only whole repeats finds no content for a partial one (it asks for the call whole)', () => {
    const messages = [user('exam'), call('a'), result('a', loaded(1)), call('b'), result('b', loaded(2))];
    const [entry] = new ConversationMeasure().repeatedResults(messages, 3);
    // What the code before partial repeats did: look the digest up among the conversation's long results.
    const known = new Set(
      messages.flatMap((message) =>
        typeof message.content === 'string'
          ? []
          : message.content.flatMap((block) =>
              block.type === 'tool_result' && typeof block.content === 'string' ? [digestOf(block.content)] : [],
            ),
      ),
    );
    expect(known.has(entry.digest)).toBe(false);
  });

  test.each([
    ['a length beyond the earlier content', { length: 10_000, suffix: '' }],
    ['no suffix', { length: 10, suffix: undefined }],
    ['a negative length', { length: -1, suffix: 'x' }],
  ])('a partial repeat with %s is refused', (_name, fields) => {
    const messages = [user('exam'), call('a'), result('a', loaded(1)), call('b'), result('b', '')];
    expect(
      restoreRepeated(messages, 3, [{ message: 1, block: 0, digest: `partial:${digestOf(loaded(1))}`, ...fields }]),
    ).toBeUndefined();
  });
});
