import { TranscriptStore } from '../activities/transcript-store';
import type { ChatMessage } from '../core/messages';
import { ConversationMeasure, transcriptMissType } from '../core/transcript';

/** What a worker keeps of the conversations it ran is bounded by their size, not only by how many turns it ran. */
const reply: ChatMessage = { role: 'assistant', content: [{ type: 'text', text: 'ok' }] };
const conversationOf = (chars: number): ChatMessage[] => [{ role: 'user', content: 'x'.repeat(chars) }];
const jsonChars = (messages: ChatMessage[]) => new ConversationMeasure().jsonLength(messages);

async function remember(store: TranscriptStore, turnId: string, messages: ChatMessage[]): Promise<ChatMessage[]> {
  await store.rememberReply({ turnId, messages }, messages, reply);
  return [...messages, reply];
}

/** Asks for the conversation a turn's next call would build on, as a delta naming it. */
async function resolveNext(store: TranscriptStore, turnId: string, held: ChatMessage[]): Promise<ChatMessage[]> {
  const measure = new ConversationMeasure();
  return store.resolve(turnId, undefined, { baseCount: held.length, baseDigest: measure.digest(held), append: [] });
}

describe('TranscriptStore memory', () => {
  it('drops the least recently used conversations beyond its character budget, whatever the turn count', async () => {
    const one = jsonChars([...conversationOf(10_000), reply]);
    const store = new TranscriptStore(undefined, { maxTurns: 500, maxChars: one * 2 + 10 });
    const first = await remember(store, 'turn-1', conversationOf(10_000));
    const second = await remember(store, 'turn-2', conversationOf(10_000));
    const third = await remember(store, 'turn-3', conversationOf(10_000));
    expect(store.held).toEqual({ turns: 2, chars: one * 2 });
    await expect(resolveNext(store, 'turn-1', first)).rejects.toMatchObject({ type: transcriptMissType });
    await expect(resolveNext(store, 'turn-2', second)).resolves.toEqual(second);
    await expect(resolveNext(store, 'turn-3', third)).resolves.toEqual(third);
  });

  it('counts a turn once, at its latest conversation', async () => {
    const store = new TranscriptStore(undefined);
    const first = await remember(store, 'turn-1', conversationOf(100));
    const longer = await remember(store, 'turn-1', [...first, { role: 'user', content: 'y'.repeat(50) }]);
    expect(store.held).toEqual({ turns: 1, chars: jsonChars(longer) });
  });

  it('keeps the conversation it just ran even when it alone is beyond the budget', async () => {
    const store = new TranscriptStore(undefined, { maxChars: 100 });
    await remember(store, 'turn-1', conversationOf(10));
    const big = await remember(store, 'turn-2', conversationOf(1_000));
    expect(store.held).toEqual({ turns: 1, chars: jsonChars(big) });
    await expect(resolveNext(store, 'turn-2', big)).resolves.toEqual(big);
  });
});
