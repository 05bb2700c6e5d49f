import type { ChatMessage } from '../core/messages';
import { ConversationMeasure, digestOf, elideRepeated, minRepeatedChars, restoreRepeated } from '../core/transcript';

/** The cached digest and JSON length must be exactly what the uncached functions say, whatever the loop does. */
const user = (text: string): ChatMessage => ({ role: 'user', content: text });
const assistant = (text: string): ChatMessage => ({ role: 'assistant', content: [{ type: 'text', text }] });

function check(measure: ConversationMeasure, messages: ChatMessage[]): void {
  expect(measure.digest(messages)).toBe(digestOf(messages));
  expect(measure.jsonLength(messages)).toBe(JSON.stringify(messages).length);
  for (let count = 0; count <= messages.length; count++) expect(measure.digest(messages, count)).toBe(digestOf(messages.slice(0, count)));
}

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
    messages[2] = { role: 'user', content: [{ type: 'text', text: 'c' }, { type: 'text', text: 'guidance' }] };
    check(measure, messages);
    const compacted = [messages[0], assistant('stub'), messages[2]];
    check(measure, compacted);
    check(measure, compacted.slice(0, 1));
    check(measure, messages);
  });
});

describe('repeated tool results', () => {
  const body = 'Subskill adaptive-difficulty. '.padEnd(minRepeatedChars + 10, 'x');
  const result = (id: string, content: string): ChatMessage => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content }] });
  const call = (id: string): ChatMessage => ({ role: 'assistant', content: [{ type: 'tool_use', id, name: 'load_subskill', input: {} }] });

  test('a long result repeating an earlier one goes by digest, and the worker restores exactly the conversation', () => {
    const messages = [user('exam'), call('a'), result('a', body), call('b'), result('b', 'short'), call('c'), result('c', body)];
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
    const messages = [user('exam'), call('a'), result('a', 'short'), call('b'), result('b', 'short'), call('c'), result('c', body)];
    expect(measure.repeatedResults(messages, 1)).toEqual([]);
    expect(restoreRepeated(messages, 5, [{ message: 1, block: 0, digest: digestOf('not there'.padEnd(minRepeatedChars, 'y')) }])).toBeUndefined();
  });

  test('after compaction replaced the earlier result, the repeat is sent whole', () => {
    const measure = new ConversationMeasure();
    const messages = [user('exam'), call('a'), result('a', body), call('b'), result('b', body)];
    expect(measure.repeatedResults(messages, 3)).toHaveLength(1);
    const compacted = [messages[0], messages[1], result('a', '[stub]'), messages[3], messages[4]];
    expect(measure.repeatedResults(compacted, 3)).toEqual([]);
  });
});
