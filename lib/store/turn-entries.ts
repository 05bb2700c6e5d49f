import type { ChatMessage } from '../../core/messages';
import { digestOf } from '../../core/transcript';
import type { SharedStore } from './shared-store';

/**
 * What a turn keeps in the shared store, in one scope per turn (or skill run): each model call's conversation as the
 * conversation it extended plus the messages it added and its response, and the system prompts and tool definitions it
 * sent whole. The workers write and read these (activities/transcript-store.ts, prompt-store.ts); the codec reads them
 * for operators.
 */

/** A conversation as the workflow names it: how many messages, and their digest. */
export interface ConversationKey {
  count: number;
  digest: string;
}

/**
 * One model call's conversation: the conversation it extended (null for one sent whole) and the messages it added, then
 * its response. One record serves two conversations, the call's and the call's with the response (stored under both
 * names): a reader takes the messages up to the count it wants. Workers of earlier code wrote two records a call, the
 * second one adding only the response; they read the same way.
 */
export interface ConversationRecord {
  base: ConversationKey | null;
  append: ChatMessage[];
}

export const turnScope = (turnId: string) => `transcript.${turnId}`;
export const conversationEntry = (key: ConversationKey) => `${key.count}-${key.digest}`;
export const promptEntry = (digest: string) => `prompt-${digest}`;

export type TurnEntryProblem = 'unreadable' | 'missing' | 'inconsistent';

/** An entry that cannot be read back: the store is down, it holds no such entry (expired, never written), or a wrong one. */
export class TurnEntryError extends Error {
  override name = 'TurnEntryError';
  constructor(
    readonly problem: TurnEntryProblem,
    message: string,
  ) {
    super(message);
  }
}

/** What the reader already holds of a turn: the conversation a key names, or undefined. The walk back stops there. */
export type KnownConversations = (key: ConversationKey) => ChatMessage[] | undefined;

/**
 * Rebuilds a conversation from its turn's records, walking back from the wanted one until a conversation the caller
 * holds or the turn's first record, and checks the result against the wanted digest.
 */
export async function readConversation(
  store: SharedStore,
  turnId: string,
  wanted: ConversationKey,
  known: KnownConversations = () => undefined,
): Promise<ChatMessage[]> {
  const additions: ChatMessage[][] = [];
  let prefix: ChatMessage[] = [];
  let at = wanted;
  for (;;) {
    const held = known(at);
    if (held) {
      prefix = held;
      break;
    }
    const record = JSON.parse(
      await readEntry(store, turnId, conversationEntry(at), `conversation of turn ${turnId} at ${at.count} messages`),
    ) as ConversationRecord;
    const added = at.count - (record.base?.count ?? 0);
    if ((record.base && added <= 0) || record.append.length < added) {
      throw new TurnEntryError(
        'inconsistent',
        `The shared store's record of turn ${turnId} at ${at.count} messages is inconsistent`,
      );
    }
    additions.push(record.append.slice(0, added));
    if (!record.base) break;
    at = record.base;
  }
  const conversation = prefix.concat(...additions.reverse());
  if (conversation.length !== wanted.count || digestOf(conversation) !== wanted.digest) {
    throw new TurnEntryError('inconsistent', `The conversation rebuilt for turn ${turnId} does not match its digest`);
  }
  return conversation;
}

/** A system prompt or tool definitions a call of the turn sent whole, by its digest (checked). */
export async function readPromptPart(store: SharedStore, turnId: string, digest: string): Promise<unknown> {
  const value = JSON.parse(
    await readEntry(store, turnId, promptEntry(digest), `prompt part ${digest} of turn ${turnId}`),
  ) as unknown;
  if (digestOf(value) !== digest)
    throw new TurnEntryError(
      'inconsistent',
      `The shared store's prompt part ${digest} of turn ${turnId} does not match its digest`,
    );
  return value;
}

async function readEntry(store: SharedStore, turnId: string, entry: string, what: string): Promise<string> {
  let text: string | undefined;
  try {
    text = await store.get(turnScope(turnId), entry);
  } catch (err) {
    throw new TurnEntryError('unreadable', `The shared store cannot be read (${(err as Error).message})`);
  }
  if (text === undefined)
    throw new TurnEntryError(
      'missing',
      `The shared store holds no ${what} (expired after its retention, or never written)`,
    );
  return text;
}
