import type { ChatMessage, ContentBlock } from './messages';

/**
 * The message the agent loop appends for a model response it acts on (tool calls, a pause). The worker that made the
 * call holds the conversation with it, so the next call's delta can start after it instead of carrying it again.
 */
export function replyMessageOf(content: ContentBlock[]): ChatMessage {
  return { role: 'assistant', content };
}

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

/**
 * Block `block` of message `message` of a delta's `append`: a whole repeat names the earlier content by its digest; a
 * partial repeat (a subskill loaded again, whose result ends with its run count) is the first `length` characters of
 * the earlier content, then `suffix`, and names it `partial:<digest>`, which workers older than partial repeats find
 * in no conversation, so they ask for the call whole instead of restoring the earlier text.
 */
export interface RepeatedResult {
  message: number;
  block: number;
  digest: string;
  length?: number;
  suffix?: string;
}

const partialPrefix = 'partial:';

/** Tool results shorter than this are sent whole even when they repeat. */
export const minRepeatedChars = 256;

/** The digest of each long tool result's content in a message, by block index. */
export function longResultsOf(message: ChatMessage): Array<{ block: number; digest: string; content: string }> {
  if (typeof message.content === 'string') return [];
  const found: Array<{ block: number; digest: string; content: string }> = [];
  message.content.forEach((block, index) => {
    if (block.type === 'tool_result' && typeof block.content === 'string' && block.content.length >= minRepeatedChars) {
      found.push({ block: index, digest: digestOf(block.content), content: block.content });
    }
  });
  return found;
}

/** How many leading characters two texts share. */
function sharedPrefixLength(a: string, b: string): number {
  const most = Math.min(a.length, b.length);
  let n = 0;
  while (n < most && a.charCodeAt(n) === b.charCodeAt(n)) n++;
  return n;
}

/** The key under which long results that may repeat one another partially are found: their first characters. */
const headOf = (content: string) => digestOf(content.slice(0, minRepeatedChars));

export const transcriptMissType = 'TranscriptMiss';

const fnvStart = (): [number, number] => [0x811c9dc5, 0x01000193 ^ 0x5bd1e995];

/**
 * Read once: in the workflow sandbox every access to a global (`Math`) goes through the vm context's interceptor, about
 * a microsecond each, which in the loop below made hashing cost ~1.7 µs a character instead of ~15 ns.
 */
const imul = Math.imul;

function feed(state: [number, number], text: string): [number, number] {
  let [a, b] = state;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    a = imul(a ^ code, 0x01000193);
    b = imul(b ^ code, 0x5bd1e995) ^ (b >>> 15);
  }
  return [a, b];
}

const hexOf = ([a, b]: [number, number]) =>
  (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');

/** A deterministic 64-bit FNV-1a digest of the JSON text (two 32-bit lanes), as 16 hex digits. */
export function digestOf(value: unknown): string {
  return digestOfJson(JSON.stringify(value));
}

/** `digestOf` of the value whose JSON text is `json`. */
export const digestOfJson = (json: string): string => hexOf(feed(fnvStart(), json));

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
  private results: Array<Array<{ block: number; digest: string; content: string }>> = [];
  private readonly firstResult = new Map<string, number>();
  /** Long results by their first characters (`headOf`): message index, block and digest, in conversation order. */
  private readonly byHead = new Map<
    string,
    Array<{ message: number; block: number; digest: string; content: string }>
  >();

  /**
   * The tool results of messages `from` onwards whose content repeats an earlier tool result of the conversation, whole
   * or (at least `minRepeatedChars` and half of it) as a prefix, as `TranscriptDelta.repeated` (message indexes counted
   * from `from`).
   */
  repeatedResults(messages: ChatMessage[], from: number): RepeatedResult[] {
    this.cover(messages, messages.length);
    const repeated: RepeatedResult[] = [];
    for (let i = from; i < messages.length; i++) {
      for (const { block, digest, content } of this.results[i]) {
        if ((this.firstResult.get(digest) ?? i) < i) {
          repeated.push({ message: i - from, block, digest });
          continue;
        }
        const partial = this.partialRepeat(from, content);
        if (partial) repeated.push({ message: i - from, block, ...partial });
      }
    }
    return repeated;
  }

  /**
   * The latest result before message `before` that `content` begins as, for most of its length. Only results the
   * worker already holds whole (before the delta) qualify: one in the delta may itself be elided.
   */
  private partialRepeat(
    before: number,
    content: string,
  ): Pick<RepeatedResult, 'digest' | 'length' | 'suffix'> | undefined {
    const entries = this.byHead.get(headOf(content)) ?? [];
    let at = entries.length - 1;
    while (at >= 0 && entries[at].message >= before) at--;
    if (at < 0) return undefined;
    const earlier = entries[at];
    const length = sharedPrefixLength(earlier.content, content);
    if (length < minRepeatedChars || length * 2 < content.length) return undefined;
    return { digest: partialPrefix + earlier.digest, length, suffix: content.slice(length) };
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
      for (const [head, entries] of this.byHead) {
        const kept = entries.filter((entry) => entry.message < same);
        if (kept.length > 0) this.byHead.set(head, kept);
        else this.byHead.delete(head);
      }
    }
    for (let i = same; i < count; i++) {
      const text = (i === 0 ? '[' : ',') + JSON.stringify(messages[i]);
      this.states.push(feed(i === 0 ? fnvStart() : this.states[i - 1], text));
      this.lengths.push((i === 0 ? 0 : this.lengths[i - 1]) + text.length);
      this.seen.push(messages[i]);
      this.results.push(longResultsOf(messages[i]));
      for (const { block, digest, content } of this.results[i]) {
        if (!this.firstResult.has(digest)) this.firstResult.set(digest, i);
        const head = headOf(content);
        const entries = this.byHead.get(head) ?? [];
        entries.push({ message: i, block, digest, content });
        this.byHead.set(head, entries);
      }
    }
  }
}

/** `append` with the repeated tool results' content left empty (copies; the run's messages stay whole). */
export function elideRepeated(append: ChatMessage[], repeated: RepeatedResult[]): ChatMessage[] {
  return append.map((message, index) => {
    const blocks = repeated.filter((entry) => entry.message === index).map((entry) => entry.block);
    if (blocks.length === 0 || typeof message.content === 'string') return message;
    return {
      ...message,
      content: message.content.map((block, at) =>
        blocks.includes(at) && block.type === 'tool_result' ? { ...block, content: '' } : block,
      ),
    };
  });
}

/**
 * The conversation with the repeated tool results of a delta appended at `from` filled in from the earlier tool results
 * they repeat; undefined when one names a content the conversation does not hold.
 */
export function restoreRepeated(
  conversation: ChatMessage[],
  from: number,
  repeated: RepeatedResult[],
): ChatMessage[] | undefined {
  const contents = new Map<string, string>();
  for (const message of conversation) {
    if (typeof message.content === 'string') continue;
    for (const block of message.content) {
      if (block.type === 'tool_result' && typeof block.content === 'string' && block.content.length >= minRepeatedChars)
        contents.set(digestOf(block.content), block.content);
    }
  }
  const restored = conversation.slice();
  for (const { message, block, digest, length, suffix } of repeated) {
    const content = contentOf(contents, digest, length, suffix);
    const target = restored[from + message];
    if (
      content === undefined ||
      !target ||
      typeof target.content === 'string' ||
      target.content[block]?.type !== 'tool_result'
    )
      return undefined;
    restored[from + message] = {
      ...target,
      content: target.content.map((b, at) => (at === block ? { ...b, content } : b)) as ChatMessage['content'],
    };
  }
  return restored;
}

/** The content a repeat names, whole or partial; undefined when the conversation holds no such content. */
function contentOf(
  contents: Map<string, string>,
  digest: string,
  length: number | undefined,
  suffix: string | undefined,
): string | undefined {
  if (!digest.startsWith(partialPrefix)) return contents.get(digest);
  const earlier = contents.get(digest.slice(partialPrefix.length));
  if (
    earlier === undefined ||
    length === undefined ||
    suffix === undefined ||
    !Number.isInteger(length) ||
    length < 0 ||
    length > earlier.length
  )
    return undefined;
  return earlier.slice(0, length) + suffix;
}
