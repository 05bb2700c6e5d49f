import { SkillflowApiError, SkillflowClient } from '../lib/client';
import { readServerSentEvents } from '../lib/client/sse';

/** A body that delivers these chunks, byte for byte. */
function body(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function read(chunks: string[]): Promise<{ type: string; data: string; lastEventId: string }[]> {
  const events = [];
  for await (const event of readServerSentEvents(body(chunks)))
    events.push({ type: event.type, data: event.data, lastEventId: event.lastEventId });
  return events;
}

const message = (data: string, lastEventId = ''): { type: string; data: string; lastEventId: string } => ({
  type: 'message',
  data,
  lastEventId,
});

/** The WHATWG event-stream interpretation, case by case. */
describe("the client's server-sent events reader", () => {
  it.each([
    ['LF line ends', ['id: 1\ndata: {"a":1}\n\n'], [message('{"a":1}', '1')]],
    ['CRLF line ends', ['id: 1\r\ndata: {"a":1}\r\n\r\n'], [message('{"a":1}', '1')]],
    ['CR line ends', ['id: 1\rdata: {"a":1}\r\r'], [message('{"a":1}', '1')]],
    [
      'a CRLF split across chunks is one line end',
      ['data: a\r', '\n\r', '\ndata: b\r\n\r\n'],
      [message('a'), message('b')],
    ],
    ['comments are ignored', [': ping\n\n: x\ndata: a\n\n'], [message('a')]],
    ['multi-line data joins with LF', ['data: a\ndata:b\ndata\n\n'], [message('a\nb\n')]],
    ['only one leading space is removed', ['data:  a\n\n'], [message(' a')]],
    ['an event is dispatched only at a blank line', ['data: a\n', 'data: b\n'], []],
    ['a blank line with no data dispatches nothing', ['retry: 10\n\nid: 4\n\n'], []],
    [
      'the last event ID persists',
      ['id: 7\ndata: a\n\ndata: b\n\nid\ndata: c\n\n'],
      [message('a', '7'), message('b', '7'), message('c', '')],
    ],
    ['an id with NUL is ignored', ['id: 3\n\nid: 4\0\ndata: a\n\n'], [message('a', '3')]],
    [
      'a named event keeps its type',
      ['event: ping\ndata: a\n\ndata: b\n\n'],
      [{ type: 'ping', data: 'a', lastEventId: '' }, message('b')],
    ],
    ['a leading BOM is dropped', ['\uFEFFdata: a\n\n'], [message('a')]],
    ['a field split across chunks', ['da', 'ta: {"x"', ':2}\n', '\n'], [message('{"x":2}')]],
  ])('%s', async (_name, chunks, expected) => {
    expect(await read(chunks)).toEqual(expected);
  });

  it('keeps the reconnection time a retry: field sets, and ignores one that is not all digits', async () => {
    const { ServerSentEventParser } = await import('../lib/client/sse');
    const parser = new ServerSentEventParser();
    parser.push('retry: 1500\r\n\r\n');
    expect(parser.retryMs).toBe(1500);
    parser.push('retry: 2s\n\n');
    expect(parser.retryMs).toBe(1500);
  });
});

interface Served {
  lastEventIds: string[];
  client: SkillflowClient;
}

/** A client whose fetch answers every event-stream request with the next of these bodies (the last one repeats). */
function serve(streams: string[][]): Served {
  const lastEventIds: string[] = [];
  const fakeFetch = (async (_url: string, init: RequestInit) => {
    const headers = init.headers as Record<string, string>;
    lastEventIds.push(headers['last-event-id']);
    const chunks = streams[Math.min(lastEventIds.length - 1, streams.length - 1)];
    return new Response(body(chunks), { status: 200, headers: { 'content-type': 'text/event-stream' } });
  }) as typeof fetch;
  return { lastEventIds, client: new SkillflowClient({ baseUrl: 'http://api.invalid', fetch: fakeFetch }) };
}

/** Follows the turn, failing by its own deadline (and stopping the follower) if it neither ends nor throws in time. */
async function follow(client: SkillflowClient, deadlineMs = 3000): Promise<{ types: string[]; error?: unknown }> {
  const abort = new AbortController();
  const types: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      abort.abort();
      reject(new Error(`followTurn neither ended nor gave up within ${deadlineMs} ms (${types.length} events)`));
    }, deadlineMs);
  });
  const run = (async (): Promise<{ types: string[]; error?: unknown }> => {
    try {
      for await (const event of client.followTurn('turn-1', { signal: abort.signal })) types.push(event.type);
      return { types };
    } catch (error) {
      return { types, error };
    }
  })();
  try {
    return await Promise.race([run, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Browsers whose ReadableStream is not async-iterable (Safari) are readers too: the reader uses getReader() only. */
describe('the reader on a body that only has getReader()', () => {
  function readerOnly(chunks: string[], cancelled: string[]): ReadableStream<Uint8Array> {
    const stream = body(chunks);
    const onlyReader = {
      getReader: () => {
        const reader = stream.getReader();
        return {
          read: () => reader.read(),
          releaseLock: () => reader.releaseLock(),
          cancel: (reason?: unknown) => {
            cancelled.push(String(reason));
            return reader.cancel(reason);
          },
        };
      },
    };
    return onlyReader as unknown as ReadableStream<Uint8Array>;
  }

  it('reads every event', async () => {
    const events = [];
    for await (const event of readServerSentEvents(readerOnly(['data: a\n\nda', 'ta: b\n\n'], [])))
      events.push(event.data);
    expect(events).toEqual(['a', 'b']);
  });

  it('cancels the body when its reader stops early (the connection is closed, not left open)', async () => {
    const cancelled: string[] = [];
    for await (const event of readServerSentEvents(readerOnly(['data: a\n\ndata: b\n\n'], cancelled)))
      if (event.data === 'a') break;
    expect(cancelled).toHaveLength(1);
  });
});

describe("followTurn's reconnections", () => {
  it('reads a CRLF stream to its terminal event', async () => {
    const { client, lastEventIds } = serve([
      [
        'retry: 1\r\n\r\nid: 1\r\ndata: {"type":"message","text":"hi","offset":1}\r\n\r\nid: 2\r\ndata: {"type":"done","offset":2}\r\n\r\n',
      ],
    ]);
    expect(await follow(client)).toEqual({ types: ['message', 'done'] });
    expect(lastEventIds).toEqual(['0']);
  });

  it('resumes from the last durable event when a stream ends without its terminal event', async () => {
    const { client, lastEventIds } = serve([
      ['retry: 1\n\nid: 1\ndata: {"type":"message","text":"hi","offset":1}\n\n'],
      ['id: 2\ndata: {"type":"done","offset":2}\n\n'],
    ]);
    expect(await follow(client)).toEqual({ types: ['message', 'done'] });
    expect(lastEventIds).toEqual(['0', '1']);
  });

  it('gives up after 5 reconnections in a row that end without a terminal event or a new event', async () => {
    const { client, lastEventIds } = serve([
      ['retry: 1\n\nid: 1\ndata: {"type":"message","text":"hi","offset":1}\n\n'],
      ['retry: 1\n\n: ping\n\n'],
    ]);
    const { types, error } = await follow(client);
    expect(types).toEqual(['message']);
    expect(error).toBeInstanceOf(SkillflowApiError);
    expect(error).toMatchObject({ status: 0, code: 'stream_interrupted' });
    expect(lastEventIds).toEqual(['0', '1', '1', '1', '1', '1']);
  });
});
