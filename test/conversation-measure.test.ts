import type { ChatMessage } from '../core/messages';
import { ConversationMeasure, digestOf } from '../core/transcript';

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
