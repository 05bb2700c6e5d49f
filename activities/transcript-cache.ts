import { ApplicationFailure } from '@temporalio/common';
import type { ChatMessage } from '../core/messages';
import { digestOf, transcriptMissType, type TranscriptDelta } from '../core/transcript';

interface Entry {
  messages: ChatMessage[];
  digest: string;
}

/** The last conversation each turn sent to this worker, so the next call can send only what is new. Bounded LRU. */
export class TranscriptCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly maxTurns = 500) {}

  /** The whole conversation of a call, from a full list or a delta on what this worker holds. */
  resolve(turnId: string, messages: ChatMessage[] | undefined, delta: TranscriptDelta | undefined): ChatMessage[] {
    if (!delta) return messages ?? [];
    const cached = this.entries.get(turnId);
    if (!cached || cached.messages.length !== delta.baseCount || cached.digest !== delta.baseDigest) {
      throw ApplicationFailure.nonRetryable(`This worker does not hold turn ${turnId}'s conversation; send it whole.`, transcriptMissType);
    }
    return [...cached.messages, ...delta.append];
  }

  remember(turnId: string, messages: ChatMessage[]): void {
    this.entries.delete(turnId);
    this.entries.set(turnId, { messages, digest: digestOf(messages) });
    while (this.entries.size > this.maxTurns) this.entries.delete(this.entries.keys().next().value as string);
  }
}
