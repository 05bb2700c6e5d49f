import { ApplicationFailure } from '@temporalio/common';
import type { ChatMessage } from '../core/messages';
import type { ModelRequest } from '../core/model';
import { ConversationMeasure, restoreRepeated, transcriptMissType, type TranscriptDelta } from '../core/transcript';
import type { SharedStore } from '../lib/store';
import {
  conversationEntry,
  readConversation,
  TurnEntryError,
  turnScope,
  type ConversationKey,
  type ConversationRecord,
} from '../lib/store/turn-entries';

/** What a worker keeps of recent conversations: JSON characters, whatever the number of turns they belong to. */
export const defaultMaxTranscriptChars = 32 * 1024 * 1024;

export interface TranscriptStoreOptions {
  /** Conversations this worker keeps in memory, one per turn, least recently used dropped first. */
  maxTurns?: number;
  /** And at most this many JSON characters of them (a long conversation counts its length, not one). */
  maxChars?: number;
  log?: (line: string) => void;
}

/**
 * Rebuilds the conversation of a model call that carries only what is new (see core/transcript.ts). This worker's
 * memory holds the last conversation of each turn it ran; the shared store holds every call's addition, written by
 * whichever worker ran it, so any worker can run any call of any turn. Without a shared store, or when it cannot be
 * read, a conversation this worker does not hold is a TranscriptMiss and the turn sends it whole once.
 */
export class TranscriptStore {
  private readonly recent = new Map<string, ConversationKey & { messages: ChatMessage[]; chars: number }>();
  private recentChars = 0;
  /** Per turn, the digests of its conversations, each message hashed once (its conversation grows by a delta a call). */
  private readonly measures = new Map<string, ConversationMeasure>();
  private readonly maxTurns: number;
  private readonly maxChars: number;
  private lastProblem = '';

  constructor(
    private readonly shared: SharedStore | undefined,
    private readonly options: TranscriptStoreOptions = {},
  ) {
    this.maxTurns = options.maxTurns ?? 500;
    this.maxChars = options.maxChars ?? defaultMaxTranscriptChars;
  }

  /** How many turns' conversations, and JSON characters of them, this worker holds. */
  get held(): { turns: number; chars: number } {
    return { turns: this.recent.size, chars: this.recentChars };
  }

  /** The whole conversation of a call, from a full list or a delta on a conversation of the same turn. */
  async resolve(
    turnId: string,
    messages: ChatMessage[] | undefined,
    delta: TranscriptDelta | undefined,
  ): Promise<ChatMessage[]> {
    if (!delta) return messages ?? [];
    const base = await this.conversation(turnId, { count: delta.baseCount, digest: delta.baseDigest });
    const conversation = [...base, ...delta.append];
    if (!delta.repeated || delta.repeated.length === 0) return conversation;
    const restored = restoreRepeated(conversation, delta.baseCount, delta.repeated);
    if (!restored)
      throw miss(
        `A repeated tool result of turn ${turnId} names a content its conversation does not hold; send it whole.`,
      );
    return restored;
  }

  /**
   * Keeps the conversation of a call that succeeded, followed by its response as the turn appends it (`replyMessageOf`),
   * in this worker's memory, and records both in the shared store in one write: the call's record (the messages it
   * added, then the response) under the conversation with the response, which the turn's next call names as its base,
   * and under the conversation without it, which the next call names when the loop did not append the response as it
   * came (a truncated or empty response). Any worker can then rebuild either. Resolves (never rejects) once stored or
   * known lost.
   */
  async rememberReply(request: ModelRequest, messages: ChatMessage[], reply: ChatMessage): Promise<void> {
    const { turnId, delta } = request;
    const sent = this.keyOf(turnId, messages);
    const conversation = [...messages, reply];
    const key = this.keyOf(turnId, conversation);
    this.keep(turnId, { ...key, messages: conversation, chars: this.measures.get(turnId)!.jsonLength(conversation) });
    if (!this.shared) return;
    const record: ConversationRecord = delta
      ? { base: { count: delta.baseCount, digest: delta.baseDigest }, append: conversation.slice(delta.baseCount) }
      : { base: null, append: conversation };
    try {
      await this.shared.put(turnScope(turnId), conversationEntry(key), JSON.stringify(record), [
        conversationEntry(sent),
      ]);
      this.lastProblem = '';
    } catch (err) {
      // The next call of this turn may then miss on another worker and send the conversation whole: slower, not wrong.
      this.report(
        `cannot write to the shared store (${(err as Error).message}); other workers will ask for whole conversations`,
      );
    }
  }

  /** Holds a turn's latest conversation, dropping the least recently used beyond the turn and character budgets. */
  private keep(turnId: string, entry: ConversationKey & { messages: ChatMessage[]; chars: number }): void {
    this.drop(turnId);
    this.recent.set(turnId, entry);
    this.recentChars += entry.chars;
    while (this.recent.size > this.maxTurns || (this.recentChars > this.maxChars && this.recent.size > 1)) {
      const oldest = this.recent.keys().next().value as string;
      this.drop(oldest);
      // Its measure holds the same messages: without the conversation it only costs memory.
      if (oldest !== turnId) this.measures.delete(oldest);
    }
  }

  private drop(turnId: string): void {
    const entry = this.recent.get(turnId);
    if (!entry) return;
    this.recentChars -= entry.chars;
    this.recent.delete(turnId);
  }

  private keyOf(turnId: string, messages: ChatMessage[]): ConversationKey {
    let measure = this.measures.get(turnId);
    if (measure) this.measures.delete(turnId);
    measure ??= new ConversationMeasure();
    this.measures.set(turnId, measure);
    while (this.measures.size > this.maxTurns) this.measures.delete(this.measures.keys().next().value as string);
    return { count: messages.length, digest: measure.digest(messages) };
  }

  /** The conversation `key` names, when this worker holds it or a longer one that begins with it. */
  private heldConversation(turnId: string, key: ConversationKey): ChatMessage[] | undefined {
    const held = this.recent.get(turnId);
    if (!held || held.count < key.count) return undefined;
    if (held.count === key.count) return held.digest === key.digest ? held.messages : undefined;
    const measure = this.measures.get(turnId);
    return measure && measure.digest(held.messages, key.count) === key.digest
      ? held.messages.slice(0, key.count)
      : undefined;
  }

  private async conversation(turnId: string, wanted: ConversationKey): Promise<ChatMessage[]> {
    const held = this.heldConversation(turnId, wanted);
    if (held) return held;
    if (!this.shared)
      throw miss(`This worker does not hold turn ${turnId}'s conversation and has no shared store; send it whole.`);
    try {
      return await readConversation(this.shared, turnId, wanted, (key) => this.heldConversation(turnId, key));
    } catch (err) {
      if (!(err instanceof TurnEntryError)) throw err;
      if (err.problem === 'unreadable')
        this.report(`cannot read the shared store (${err.message}); turns send whole conversations meanwhile`);
      throw miss(`${err.message}; send the conversation whole.`);
    }
  }

  /** Logs a store problem once until it changes, not on every call. */
  private report(problem: string): void {
    if (problem === this.lastProblem) return;
    this.lastProblem = problem;
    this.options.log?.(`transcripts: ${problem}`);
  }
}

export const miss = (message: string) => ApplicationFailure.nonRetryable(message, transcriptMissType);
