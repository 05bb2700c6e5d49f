/** One dispatched server-sent event: its type (`message` unless `event:` named one), data, and the last event ID. */
export interface ServerSentEvent {
  type: string;
  data: string;
  /** The stream's last event ID when this event was dispatched (an `id:` persists until another replaces it). */
  lastEventId: string;
}

/**
 * The event-stream interpretation of the WHATWG HTML standard ("Server-sent events", 9.2.6): lines end in CRLF, LF or
 * CR (a CR at the end of one chunk and an LF at the start of the next are one line end); a leading BOM is dropped;
 * `:` starts a comment; `data:` lines join with LF; an event is dispatched only at a blank line, never at the end of
 * the stream; `retry:` with only digits sets the reconnection time.
 */
export class ServerSentEventParser {
  private buffer = '';
  private started = false;
  private skipLineFeed = false;
  private data: string[] = [];
  private type = '';
  private lastEventId = '';
  /** The reconnection time a `retry:` field set, in ms. */
  retryMs: number | undefined;

  /** The events completed by this piece of the decoded stream. */
  push(text: string): ServerSentEvent[] {
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.startsWith('\uFEFF')) text = text.slice(1);
    }
    if (this.skipLineFeed && text.startsWith('\n')) text = text.slice(1);
    this.skipLineFeed = false;
    this.buffer += text;
    const events: ServerSentEvent[] = [];
    let start = 0;
    for (let index = 0; index < this.buffer.length; index += 1) {
      const char = this.buffer[index];
      if (char !== '\r' && char !== '\n') continue;
      const event = this.line(this.buffer.slice(start, index));
      if (event) events.push(event);
      if (char === '\r') {
        if (index + 1 === this.buffer.length) this.skipLineFeed = true;
        else if (this.buffer[index + 1] === '\n') index += 1;
      }
      start = index + 1;
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }

  private line(line: string): ServerSentEvent | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.type = value;
    else if (field === 'id' && !value.includes('\0')) this.lastEventId = value;
    else if (field === 'retry' && /^[0-9]+$/.test(value)) this.retryMs = Number(value);
    return undefined;
  }

  private dispatch(): ServerSentEvent | undefined {
    const data = this.data;
    const type = this.type;
    this.data = [];
    this.type = '';
    if (data.length === 0) return undefined;
    return { type: type || 'message', data: data.join('\n'), lastEventId: this.lastEventId };
  }
}

/**
 * Reads a `text/event-stream` body into its events; `parser.retryMs` then holds any reconnection time it set. Reads
 * with `getReader()`, which every browser has (Safari's streams are not async-iterable); a reader that stops early
 * cancels the body, which closes the connection.
 */
export async function* readServerSentEvents(
  body: ReadableStream<Uint8Array>,
  parser = new ServerSentEventParser(),
): AsyncGenerator<ServerSentEvent> {
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  const reader = body.getReader();
  let finished = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      yield* parser.push(decoder.decode(value, { stream: true }));
    }
    finished = true;
    yield* parser.push(decoder.decode());
  } finally {
    if (finished) reader.releaseLock();
    else await reader.cancel('the reader stopped').catch(() => undefined);
  }
}
