/** One user/assistant exchange of an earlier turn; only the text is carried into later turns. */
export interface Exchange {
  user: string;
  assistant: string;
}

/**
 * What a session keeps of its turns, bounded: the session's state crosses continue-as-new whole, and Temporal refuses
 * a payload over 2 MiB. The session holds the last `maxRecords` turns and at most `maxTextBytes` of their text (UTF-8);
 * older turns stay readable through their own workflows (GET /v1/turns/:id, GET /v1/turns?session=).
 */
export const sessionRecordLimits = { maxRecords: 100, maxTextBytes: 512 * 1024 } as const;

/** The default byte cap of the earlier exchanges a new turn sees (SKILLFLOW_HISTORY_WINDOW_BYTES). */
export const defaultHistoryWindowBytes = 256 * 1024;

/** The largest history window the settings accept: the records a session keeps must hold all of it. */
export const maxHistoryWindowBytes = sessionRecordLimits.maxTextBytes;

/** The part of a turn record these rules read and cut. */
export interface RecordText {
  status: string;
  message: string;
  output?: string;
  /** Set when the record's text was cut to fit the session's limits; the turn itself holds the whole text. */
  truncated?: boolean;
}

/** Bytes of a string as UTF-8, counted without Node (workflow code): lone surrogates count as U+FFFD (3 bytes). */
export function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length && isLowSurrogate(text.charCodeAt(i + 1))) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** The longest prefix of `text` within `maxBytes` of UTF-8, never splitting a surrogate pair. */
export function cutToBytes(text: string, maxBytes: number): string {
  if (utf8Bytes(text) <= maxBytes) return text;
  let bytes = 0;
  let end = 0;
  while (end < text.length) {
    const code = text.charCodeAt(end);
    const pair = code >= 0xd800 && code <= 0xdbff && end + 1 < text.length && isLowSurrogate(text.charCodeAt(end + 1));
    const size = code < 0x80 ? 1 : code < 0x800 ? 2 : pair ? 4 : 3;
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += pair ? 2 : 1;
  }
  return text.slice(0, end);
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

const textBytes = (record: RecordText) => utf8Bytes(record.message) + utf8Bytes(record.output ?? '');

/**
 * The earlier exchanges a new turn sees: turns with an answer, newest last, at most `window` of them and at most
 * `windowBytes` of text. Counting from the newest, the first exchange that does not fit ends the window (older ones
 * are left out too, so the model never sees a gap); when even the newest does not fit, its text is cut to fit, the
 * message first.
 */
export function historyWindow(turns: readonly RecordText[], window: number, windowBytes: number): Exchange[] {
  if (window <= 0 || windowBytes <= 0) return [];
  const answered = turns.filter((turn) => turn.status === 'completed' || turn.output).slice(-window);
  const kept: Exchange[] = [];
  let budget = windowBytes;
  for (let i = answered.length - 1; i >= 0; i--) {
    const turn = answered[i]!;
    const size = textBytes(turn);
    if (size <= budget) {
      kept.unshift({ user: turn.message, assistant: turn.output ?? '' });
      budget -= size;
      continue;
    }
    if (kept.length === 0) {
      const user = cutToBytes(turn.message, Math.ceil(budget / 2));
      kept.unshift({ user, assistant: cutToBytes(turn.output ?? '', budget - utf8Bytes(user)) });
    }
    break;
  }
  return kept;
}

/**
 * The records a session keeps: the newest, at most `maxRecords`, and as many as fit in `maxTextBytes` of text,
 * counting from the newest (the first that does not fit ends the tail). The newest record is always kept; when it
 * alone holds more text than that, its output, then its message, are cut to fit and it is marked `truncated`.
 */
export function boundedRecords<T extends RecordText>(
  turns: readonly T[],
  limits: { maxRecords: number; maxTextBytes: number } = sessionRecordLimits,
): T[] {
  const kept: T[] = [];
  let budget = limits.maxTextBytes;
  for (let i = turns.length - 1; i >= 0 && kept.length < limits.maxRecords; i--) {
    const record = turns[i]!;
    const size = textBytes(record);
    if (size <= budget) {
      kept.unshift(record);
      budget -= size;
      continue;
    }
    if (kept.length === 0) kept.unshift(cutRecord(record, budget));
    break;
  }
  return kept;
}

function cutRecord<T extends RecordText>(record: T, maxBytes: number): T {
  const message = cutToBytes(record.message, maxBytes);
  const output = record.output === undefined ? undefined : cutToBytes(record.output, maxBytes - utf8Bytes(message));
  return { ...record, message, ...(output === undefined ? {} : { output }), truncated: true };
}
