import type { ChatMessage } from './messages';

/**
 * Keeps the conversation out of workflow history: a model call sends only the messages added since the previous
 * call, with the count and digest of what the worker should already hold. A worker that does not hold it answers
 * TranscriptMiss and the turn sends the whole conversation once.
 */
export interface TranscriptDelta {
  baseCount: number;
  baseDigest: string;
  append: ChatMessage[];
}

export const transcriptMissType = 'TranscriptMiss';

const fnvStart = (): [number, number] => [0x811c9dc5, 0x01000193 ^ 0x5bd1e995];

function feed(state: [number, number], text: string): [number, number] {
  let [a, b] = state;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    a = Math.imul(a ^ code, 0x01000193);
    b = Math.imul(b ^ code, 0x5bd1e995) ^ (b >>> 15);
  }
  return [a, b];
}

const hexOf = ([a, b]: [number, number]) => (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');

/** A deterministic 64-bit FNV-1a digest of the JSON text (two 32-bit lanes), as 16 hex digits. */
export function digestOf(value: unknown): string {
  return hexOf(feed(fnvStart(), JSON.stringify(value)));
}

/**
 * `digestOf` and the JSON length of a conversation, computed once per message: a round costs what it added, not the
 * whole conversation again. Messages are values (the agent loop replaces a message, never changes one in place); the
 * measure recognises the messages it has seen by identity and hashes only from the first one that differs, so its
 * answers are exactly `digestOf(messages.slice(0, count))` and `JSON.stringify(messages).length`.
 */
export class ConversationMeasure {
  private seen: ChatMessage[] = [];
  /** The digest state and JSON length of `[` + the first i+1 messages joined by `,`. */
  private states: Array<[number, number]> = [];
  private lengths: number[] = [];

  digest(messages: ChatMessage[], count = messages.length): string {
    if (count === 0) return digestOf([]);
    this.cover(messages, count);
    return hexOf(feed(this.states[count - 1], ']'));
  }

  jsonLength(messages: ChatMessage[]): number {
    if (messages.length === 0) return 2;
    this.cover(messages, messages.length);
    return this.lengths[messages.length - 1] + 1;
  }

  private cover(messages: ChatMessage[], count: number): void {
    let same = 0;
    const known = Math.min(this.seen.length, count);
    while (same < known && this.seen[same] === messages[same]) same++;
    if (same < this.seen.length) {
      this.seen.length = same;
      this.states.length = same;
      this.lengths.length = same;
    }
    for (let i = same; i < count; i++) {
      const text = (i === 0 ? '[' : ',') + JSON.stringify(messages[i]);
      this.states.push(feed(i === 0 ? fnvStart() : this.states[i - 1], text));
      this.lengths.push((i === 0 ? 0 : this.lengths[i - 1]) + text.length);
      this.seen.push(messages[i]);
    }
  }
}
