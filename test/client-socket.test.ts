import { SkillflowApiError, SkillflowClient, type StreamEvent, type TurnSocketFrame } from '../lib/client';

type Listener = (event: never) => void;

/** A WebSocket as the WHATWG interface describes it, driven by the test: what the client sent, and frames to receive. */
class ScriptedSocket {
  static made: ScriptedSocket[] = [];
  readyState = 0;
  readonly sent: Array<Record<string, unknown>> = [];
  private readonly listeners = new Map<string, Listener[]>();

  constructor(readonly url: string) {
    ScriptedSocket.made.push(this);
  }

  addEventListener(type: string, listener: Listener): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }

  send(data: string): void {
    this.sent.push(JSON.parse(data));
  }

  close(code = 1005, reason = ''): void {
    this.closed(code, reason);
  }

  opened(): void {
    this.readyState = 1;
    this.emit('open', {});
  }

  receive(frame: TurnSocketFrame): void {
    this.emit('message', { data: JSON.stringify(frame) });
  }

  closed(code: number, reason: string): void {
    this.readyState = 3;
    this.emit('close', { code, reason });
  }

  private emit(type: string, event: object): void {
    for (const listener of this.listeners.get(type) ?? []) (listener as (event: object) => void)(event);
  }
}

const turnId = 'turn-0123456789abcdef0123-1';
const event = (body: StreamEvent): TurnSocketFrame => ({ type: 'event', event: body });
const status = (offset: number): StreamEvent => ({
  type: 'status',
  status: 'running',
  offset,
  at: '2026-01-01T00:00:00Z',
});

async function openSocket(options: { apiKey?: string; fetch?: typeof fetch } = {}) {
  ScriptedSocket.made = [];
  const client = new SkillflowClient({ baseUrl: 'http://api.test:3000/', WebSocket: ScriptedSocket, ...options });
  const opening = client.openTurnSocket(turnId, { after: 2 });
  await new Promise((resolve) => setImmediate(resolve));
  const scripted = ScriptedSocket.made[0];
  scripted.opened();
  return { socket: await opening, scripted };
}

async function collect(events: AsyncGenerator<StreamEvent>): Promise<string[]> {
  const types: string[] = [];
  for await (const item of events) types.push(item.type);
  return types;
}

describe('the client over a WebSocket', () => {
  it('opens ws:// at the turn after the offset given, and yields events until the terminal one', async () => {
    const { socket, scripted } = await openSocket();
    expect(scripted.url).toBe(`ws://api.test:3000/v1/turns/${turnId}/ws?after=2`);
    const reading = collect(socket.events());
    scripted.receive(event(status(3)));
    scripted.receive(event({ type: 'message.delta', text: 'Hi' }));
    scripted.receive(event({ type: 'done', output: 'Hi', offset: 4, at: '2026-01-01T00:00:01Z' }));
    scripted.receive(event(status(5)));
    expect(await reading).toEqual(['status', 'message.delta', 'done']);
    expect(socket.lastOffset).toBe(4);
  });

  it('with an API key, gets a write stream token first and opens the socket with it', async () => {
    const requests: Array<{ url: string; body: unknown; authorization: string | null }> = [];
    const fetchToken = (async (url: string, init: RequestInit) => {
      requests.push({
        url,
        body: JSON.parse(String(init.body)),
        authorization: new Headers(init.headers).get('authorization'),
      });
      return Response.json({ token: 'tok.en', expiresAt: '2026-01-01T00:05:00Z', scope: 'write' }, { status: 201 });
    }) as unknown as typeof fetch;
    const { scripted } = await openSocket({ apiKey: 'alice-key', fetch: fetchToken });
    expect(requests).toEqual([
      {
        url: 'http://api.test:3000/v1/stream-tokens',
        body: { turnId, scope: 'write' },
        authorization: 'Bearer alice-key',
      },
    ]);
    expect(scripted.url).toBe(`ws://api.test:3000/v1/turns/${turnId}/ws?after=2&token=tok.en`);
  });

  it('settles each request with its ack or error frame; an error without requestId answers the oldest one waiting', async () => {
    const { socket, scripted } = await openSocket();
    const approved = socket.answerCheckpoint('cp-1', { action: 'approve' });
    const refused = socket.answerCheckpoint('cp-2', { action: 'answer', answer: 'x' });
    const limited = socket.cancel();
    expect(scripted.sent).toEqual([
      { type: 'checkpoint', checkpointId: 'cp-1', action: 'approve', requestId: 1 },
      { type: 'checkpoint', checkpointId: 'cp-2', action: 'answer', answer: 'x', requestId: 2 },
      { type: 'cancel', requestId: 3 },
    ]);
    scripted.receive({
      type: 'error',
      requestId: 2,
      status: 409,
      error: { code: 'checkpoint_not_pending', message: 'no' },
    });
    scripted.receive({ type: 'ack', requestId: 1, checkpointId: 'cp-1', action: 'approve', by: 'alice' });
    scripted.receive({ type: 'error', status: 429, error: { code: 'rate_limited', message: 'slow' }, retryAfter: 3 });
    expect(await approved).toEqual({ checkpointId: 'cp-1', action: 'approve', by: 'alice' });
    await expect(refused).rejects.toMatchObject({ status: 409, code: 'checkpoint_not_pending' });
    await expect(limited).rejects.toMatchObject({ status: 429, code: 'rate_limited', retryAfterSeconds: 3 });
  });

  it('a socket closed before the terminal event: events() throws stream_interrupted with the offset to resume from', async () => {
    const { socket, scripted } = await openSocket();
    const waiting = socket.cancel();
    const reading = collect(socket.events());
    scripted.receive(event(status(7)));
    scripted.closed(1001, 'server shutting down');
    const error = await reading.catch((err: unknown) => err);
    expect(error).toBeInstanceOf(SkillflowApiError);
    expect(error).toMatchObject({ code: 'stream_interrupted' });
    expect((error as Error).message).toContain('(1001 server shutting down)');
    expect((error as Error).message).toContain('after: 7');
    await expect(waiting).rejects.toMatchObject({ code: 'websocket_closed' });
    await expect(socket.answerCheckpoint('cp-1', { action: 'approve' })).rejects.toMatchObject({
      code: 'websocket_closed',
    });
  });

  it('a socket that never opens rejects websocket_failed; no WebSocket at all is a TypeError that says what to pass', async () => {
    ScriptedSocket.made = [];
    const client = new SkillflowClient({ baseUrl: 'http://api.test:3000', WebSocket: ScriptedSocket });
    const opening = client.openTurnSocket(turnId);
    await new Promise((resolve) => setImmediate(resolve));
    ScriptedSocket.made[0].closed(1006, '');
    await expect(opening).rejects.toMatchObject({ code: 'websocket_failed' });

    const global = globalThis as { WebSocket?: unknown };
    const saved = global.WebSocket;
    delete global.WebSocket;
    try {
      await expect(new SkillflowClient({ baseUrl: 'http://api.test:3000' }).openTurnSocket(turnId)).rejects.toThrow(
        /pass one, e\.g\. new SkillflowClient\(\{ baseUrl, WebSocket \}\) with WebSocket from the ws package/,
      );
    } finally {
      if (saved) global.WebSocket = saved;
    }
  });
});
