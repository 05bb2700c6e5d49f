import net, { type AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { InProcessChannel } from '../lib/live';
import { turnEventsQuery } from '../workflows/definitions';
import { livePublisher } from '../worker/model-deps';
import { authHeaders, bobKey, buildTestApp } from './support/api';
import { testDeps } from './support/deps';
import { startFakeAnthropic, text, toolUse, type FakeAnthropic } from './support/fake-anthropic';
import { ApiDriver } from './support/scenario';
import { SseClient, WsClient } from './support/stream-clients';
import { TemporalTestEnv } from './support/temporal';

const ask = (checkpoint: string) =>
  toolUse('request_human_approval', { checkpoint, summary: `Decide ${checkpoint}`, kind: 'approval' });

/** Event streams over real HTTP: SSE with resume, the WebSocket protocol, live deltas from an in-process worker. */
describe('turn event streams over HTTP', () => {
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let live: InProcessChannel;
  let app: FastifyInstance;
  let api: ApiDriver;
  let base: string;
  let taskQueue: string;

  beforeAll(async () => {
    env = await TemporalTestEnv.connect();
    fake = await startFakeAnthropic();
    live = new InProcessChannel();
    taskQueue = env.newTaskQueue('streams');
    const deps = testDeps(fake.url);
    await env.startWorker(taskQueue, { ...deps, model: { ...deps.model, publishDelta: livePublisher(live) } });
    ({ app } = await buildTestApp(env.client, taskQueue, {}, { live }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    api = new ApiDriver(app);
  });
  afterAll(async () => {
    await app?.close();
    await live?.close();
    await env?.close();
    await fake?.close();
  });
  afterEach(() => expect(fake.pending).toBe(0));

  const sse = (turnId: string, headers: Record<string, string> = authHeaders(), query = '') =>
    SseClient.open(`${base}/v1/turns/${turnId}/events${query}`, headers);
  const ws = (turnId: string, headers: Record<string, string> = authHeaders(), query = '') =>
    WsClient.open(`${base.replace('http', 'ws')}/v1/turns/${turnId}/ws${query}`, headers);
  const logOf = (turnId: string) => env.client.workflow.getHandle(turnId).query(turnEventsQuery, 0);

  it('SSE: live deltas as the model writes, then the durable events with offsets as ids, and the stream ends', async () => {
    fake.enqueue({ content: [text('Hello there, streaming world.')], delayMs: 150 });
    const turnId = await api.startTurn('stream please');
    const stream = await sse(turnId);
    expect(stream.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    await stream.ended;

    const types = stream.events.map((event) => event.type);
    expect(types.at(-1)).toBe('done');
    const deltas = stream.messages.filter((m) => m.data.type === 'message.delta');
    expect(deltas.map((m) => m.data.text).join('')).toBe('Hello there, streaming world.');
    expect(deltas.every((m) => m.id === undefined && m.data.call && m.data.attempt === 1)).toBe(true);
    expect(types.lastIndexOf('message.delta')).toBeLessThan(types.indexOf('message'));

    const durable = stream.messages.filter((m) => m.id !== undefined);
    expect(durable.map((m) => Number(m.id))).toEqual(durable.map((m) => m.data.offset));
    expect(durable.map((m) => m.data)).toEqual(await logOf(turnId));
  });

  it('SSE: Last-Event-ID resumes without loss or duplicates; ?after= does the same for a first connection', async () => {
    fake.enqueue({ content: [text('Let me check.'), ask('resume')] }, { content: [text('Resumed and done.')] });
    const turnId = await api.startTurn('resume me');
    const first = await sse(turnId);
    await first.waitFor((event) => event.type === 'checkpoint.requested');
    first.close();
    const lastId = first.messages.filter((m) => m.id !== undefined).at(-1)!.id!;

    expect((await api.answer(turnId, 'cp-1', { action: 'approve' })).code).toBe(200);
    const second = await sse(turnId, { ...authHeaders(), 'last-event-id': lastId });
    await second.ended;

    const offsets = [...first.messages, ...second.messages].filter((m) => m.id !== undefined).map((m) => Number(m.id));
    const log = await logOf(turnId);
    expect(offsets).toEqual(log.map((event) => event.offset));
    expect(second.events.at(-1)).toMatchObject({ type: 'done', output: 'Resumed and done.' });

    const tail = await sse(turnId, authHeaders(), `?after=${log.length - 2}`);
    await tail.ended;
    expect(tail.events.map((event) => event.offset)).toEqual([log.length - 1, log.length]);
  });

  it('WebSocket: events, a rejected decision, an accepted one with who answered, then a clean close', async () => {
    fake.enqueue({ content: [ask('ws_params')] }, { content: [text('Approved over the socket.')] });
    const turnId = await api.startTurn('socket');
    const socket = await ws(turnId);
    await socket.waitForEvent((event) => event.type === 'checkpoint.requested');

    socket.send({ type: 'checkpoint', requestId: 'r1', checkpointId: 'cp-1', action: 'answer', answer: 'x' });
    expect(await socket.waitForReply('r1')).toEqual({
      type: 'error',
      requestId: 'r1',
      status: 400,
      error: {
        code: 'invalid_decision',
        message: 'An approval checkpoint accepts approve, modify, cancel; not "answer".',
        details: [
          {
            path: 'action',
            rule: 'enum',
            allowed: ['approve', 'modify', 'cancel'],
            message: 'An approval checkpoint accepts approve, modify, cancel; not "answer".',
          },
        ],
      },
    });
    socket.send({ type: 'checkpoint', requestId: 'r2', checkpointId: 'cp-1', action: 'bogus' });
    expect(await socket.waitForReply('r2')).toMatchObject({
      type: 'error',
      status: 400,
      error: { code: 'invalid_request' },
    });
    socket.send({ type: 'checkpoint', requestId: 'r3', checkpointId: 'cp-9', action: 'approve' });
    expect(await socket.waitForReply('r3')).toMatchObject({ type: 'error', status: 404, error: { code: 'not_found' } });
    socket.send('not json');
    socket.send({ type: 'dance', requestId: 7 });

    for (let i = 0; i < 12; i += 1)
      socket.send({ type: 'checkpoint', requestId: `burst-${i}`, checkpointId: 'cp-9', action: 'approve' });
    const burst = await Promise.all(Array.from({ length: 12 }, (_, i) => socket.waitForReply(`burst-${i}`)));
    expect(burst.filter((reply) => reply.status === 429).map((reply) => reply.error.code)).toEqual([
      'rate_limited',
      'rate_limited',
      'rate_limited',
      'rate_limited',
    ]);
    expect(burst.filter((reply) => reply.status === 404)).toHaveLength(8);

    socket.send({ type: 'checkpoint', requestId: 4, checkpointId: 'cp-1', action: 'approve' });
    expect(await socket.waitForReply(4)).toEqual({
      type: 'ack',
      requestId: 4,
      checkpointId: 'cp-1',
      action: 'approve',
      by: 'alice',
    });
    socket.send({ type: 'checkpoint', requestId: 5, checkpointId: 'cp-1', action: 'approve' });
    expect(await socket.waitForReply(5)).toMatchObject({
      type: 'error',
      status: 409,
      error: { code: 'checkpoint_not_pending' },
    });

    expect(await socket.closed).toEqual({ code: 1000, reason: 'turn ended' });
    expect(socket.events.find((event) => event.type === 'checkpoint.resolved')).toMatchObject({
      by: 'alice',
      action: 'approve',
    });
    expect(socket.events.at(-1)).toMatchObject({ type: 'done', output: 'Approved over the socket.' });
    const errors = socket.frames.filter((frame) => frame.type === 'error' && frame.requestId === undefined);
    expect(errors.map((frame) => frame.error.code)).toEqual(['invalid_request']);
    expect(socket.frames.find((frame) => frame.requestId === 7)).toMatchObject({
      status: 400,
      error: { message: 'type must be "checkpoint" or "cancel".' },
    });
  });

  /** A raw upgrade without a key: the server answers and closes the socket itself (else shutdown would wait on it). */
  const refusedUpgrade = (path: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = net.connect((app.server.address() as AddressInfo).port, '127.0.0.1');
      let response = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (response += chunk));
      socket.on('close', () => resolve(response));
      socket.on('error', reject);
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
      );
      setTimeout(() => reject(new Error(`the server kept the refused socket open; got ${response}`)), 5_000).unref();
    });

  it('WebSocket: cancel on the same socket ends the turn cancelled; a second cancel is a 409', async () => {
    fake.enqueue({ content: [ask('to_cancel')] });
    const turnId = await api.startTurn('cancel me');
    const socket = await ws(turnId);
    await socket.waitForEvent((event) => event.type === 'checkpoint.requested');
    socket.send({ type: 'cancel', requestId: 'c1' });
    expect(await socket.waitForReply('c1')).toEqual({ type: 'ack', requestId: 'c1', cancelRequested: true });
    await socket.closed;
    expect(socket.events.at(-1)).toMatchObject({ type: 'cancelled', reason: 'cancelled' });
    expect((await api.turn(turnId)).body).toMatchObject({ status: 'cancelled', reason: 'cancelled' });
    const again = await app.inject({ method: 'POST', url: `/v1/turns/${turnId}/cancel`, headers: authHeaders() });
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('turn_ended');
  });

  it("streams refuse strangers: 401 without a key, 404 for another user's turn, 426 without an upgrade", async () => {
    fake.enqueue({ content: [text('private')] });
    const turnId = await api.startTurn('mine');
    await api.finished(turnId);
    await expect(sse(turnId, {})).rejects.toMatchObject({ status: 401 });
    await expect(sse(turnId, authHeaders(bobKey))).rejects.toMatchObject({ status: 404 });
    await expect(ws(turnId, {})).rejects.toMatchObject({ status: 401 });
    await expect(ws(turnId, authHeaders(bobKey))).rejects.toMatchObject({ status: 404 });
    expect(await refusedUpgrade(`/v1/turns/${turnId}/ws`)).toMatch(/^HTTP\/1.1 401 /);
    const plain = await fetch(`${base}/v1/turns/${turnId}/ws`, { headers: authHeaders() });
    expect(plain.status).toBe(426);
    expect(await plain.json()).toEqual({
      error: { code: 'upgrade_required', message: expect.any(String), requestId: plain.headers.get('x-request-id') },
    });
  });

  it('a turn terminated in Temporal ends its streams with a synthesized error event', async () => {
    fake.enqueue({ content: [ask('never_answered')] });
    const turnId = await api.startTurn('terminate me');
    await api.pending(turnId);
    const stream = await sse(turnId);
    await stream.waitFor((event) => event.type === 'checkpoint.requested');
    await env.client.workflow.getHandle(turnId).terminate('operator stopped it');
    await stream.ended;
    const last = stream.messages.at(-1)!;
    expect(last.data).toMatchObject({ type: 'error', code: 'terminated', synthesized: true });
    expect(Number(last.id)).toBe(last.data.offset);
    expect((await api.turn(turnId)).body).toMatchObject({
      status: 'failed',
      reason: 'terminated',
      error: { code: 'terminated' },
    });
  });

  it('a retried model call is marked: message.reset with the new attempt, then its deltas from the start', async () => {
    fake.enqueue(
      {
        streamError: { type: 'overloaded_error', message: 'busy' },
        afterText: 'Partial answer that will be',
        delayMs: 150,
      },
      { content: [text('Full answer.')], delayMs: 50 },
    );
    const turnId = await api.startTurn('retry');
    const stream = await sse(turnId);
    await stream.ended;
    const live = stream.events.filter((event) => event.type.startsWith('message.'));
    const reset = live.findIndex((event) => event.type === 'message.reset');
    expect(reset).toBeGreaterThan(0);
    expect(live[reset]).toMatchObject({ attempt: 2 });
    expect(
      live
        .slice(0, reset)
        .map((event) => event.text)
        .join(''),
    ).toBe('Partial answer that will be');
    expect(
      live
        .slice(reset + 1)
        .filter((event) => event.type === 'message.delta')
        .map((event) => event.text)
        .join(''),
    ).toBe('Full answer.');
    expect(stream.events.at(-1)).toMatchObject({ type: 'done', output: 'Full answer.' });
  });

  it('shutdown closes open streams cleanly: SSE ends, WebSocket closes with 1001', async () => {
    const { app: other } = await buildTestApp(env.client, taskQueue, {}, { live });
    await other.listen({ port: 0, host: '127.0.0.1' });
    const otherBase = `http://127.0.0.1:${(other.server.address() as AddressInfo).port}`;
    fake.enqueue({ content: [ask('left_waiting')] }, { content: [text('bye')] });
    const turnId = await api.startTurn('shutdown');
    await api.pending(turnId);
    const stream = await SseClient.open(`${otherBase}/v1/turns/${turnId}/events`, authHeaders());
    const socket = await WsClient.open(`${otherBase.replace('http', 'ws')}/v1/turns/${turnId}/ws`, authHeaders());
    await stream.waitFor((event) => event.type === 'checkpoint.requested');
    await socket.waitForEvent((event) => event.type === 'checkpoint.requested');

    const started = Date.now();
    await other.close();
    expect(Date.now() - started).toBeLessThan(3_000);
    await stream.ended;
    expect(stream.comments).toContain('server shutting down');
    expect(await socket.closed).toEqual({ code: 1001, reason: 'server shutting down' });

    await api.answer(turnId, 'cp-1', { action: 'approve' });
    await api.finished(turnId);
  });
});
