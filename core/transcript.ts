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
  /**
   * Tool results of `append` whose content repeats, whole, a tool result earlier in the conversation (a subskill loaded
   * again): sent with empty content, named here by `digestOf` of that content; the worker copies it from the earlier one.
   */
  repeated?: RepeatedResult[];
}

/** Block `block` of message `message` of a delta's `append`. */
export interface RepeatedResult {
  message: number;
  block: number;
  digest: string;
}

/** Tool results shorter than this are sent whole even when they repeat. */
export const minRepeatedChars = 256;

/** The digest of each long tool result's content in a message, by block index. */
export function longResultsOf(message: ChatMessage): Array<{ block: number; digest: string }> {
  if (typeof message.content === 'string') return [];
  const found: Array<{ block: number; digest: string }> = [];
  message.content.forEach((block, index) => {
    if (block.type === 'tool_result' && typeof block.content === 'string' && block.content.length >= minRepeatedChars) found.push({ block: index, digest: digestOf(block.content) });
  });
  return found;
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
  /** Long tool results of each message (`longResultsOf`), and where each digest first occurs. */
  private results: Array<Array<{ block: number; digest: string }>> = [];
  private readonly firstResult = new Map<string, number>();

  /**
   * The tool results of messages `from` onwards whose content repeats an earlier tool result of the conversation whole,
   * as `TranscriptDelta.repeated` (message indexes counted from `from`).
   */
  repeatedResults(messages: ChatMessage[], from: number): RepeatedResult[] {
    this.cover(messages, messages.length);
    const repeated: RepeatedResult[] = [];
    for (let i = from; i < messages.length; i++) {
      for (const { block, digest } of this.results[i]) {
        if ((this.firstResult.get(digest) ?? i) < i) repeated.push({ message: i - from, block, digest });
      }
    }
    return repeated;
  }

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
      this.results.length = same;
      for (const [digest, at] of this.firstResult) if (at >= same) this.firstResult.delete(digest);
    }
    for (let i = same; i < count; i++) {
      const text = (i === 0 ? '[' : ',') + JSON.stringify(messages[i]);
      this.states.push(feed(i === 0 ? fnvStart() : this.states[i - 1], text));
      this.lengths.push((i === 0 ? 0 : this.lengths[i - 1]) + text.length);
      this.seen.push(messages[i]);
      this.results.push(longResultsOf(messages[i]));
      for (const { digest } of this.results[i]) if (!this.firstResult.has(digest)) this.firstResult.set(digest, i);
    }
  }
}

/** `append` with the repeated tool results' content left empty (copies; the run's messages stay whole). */
export function elideRepeated(append: ChatMessage[], repeated: RepeatedResult[]): ChatMessage[] {
  return append.map((message, index) => {
    const blocks = repeated.filter((entry) => entry.message === index).map((entry) => entry.block);
    if (blocks.length === 0 || typeof message.content === 'string') return message;
    return { ...message, content: message.content.map((block, at) => (blocks.includes(at) && block.type === 'tool_result' ? { ...block, content: '' } : block)) };
  });
}

/**
 * The conversation with the repeated tool results of a delta appended at `from` filled in from the earlier tool results
 * they repeat; undefined when one names a content the conversation does not hold.
 */
export function restoreRepeated(conversation: ChatMessage[], from: number, repeated: RepeatedResult[]): ChatMessage[] | undefined {
  const contents = new Map<string, string>();
  for (const message of conversation) {
    if (typeof message.content === 'string') continue;
    for (const block of message.content) {
      if (block.type === 'tool_result' && typeof block.content === 'string' && block.content.length >= minRepeatedChars) contents.set(digestOf(block.content), block.content);
    }
  }
  const restored = conversation.slice();
  for (const { message, block, digest } of repeated) {
    const content = contents.get(digest);
    const target = restored[from + message];
    if (content === undefined || !target || typeof target.content === 'string' || target.content[block]?.type !== 'tool_result') return undefined;
    restored[from + message] = { ...target, content: target.content.map((b, at) => (at === block ? { ...b, content } : b)) as ChatMessage['content'] };
  }
  return restored;
}
