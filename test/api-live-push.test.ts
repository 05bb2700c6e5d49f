import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { TurnSnapshot } from '../core/turn-snapshot';
import { InProcessChannel, RedisChannel, type LiveChannel, type LiveEvent } from '../lib/live';
import { turnEventsQuery, turnStateQuery } from '../workflows/definitions';
import { sessionIdOfTurn } from '../api/turn-view';
import { authHeaders, bobKey, buildTestApp, eventually } from './support/api';
import { testDeps } from './support/deps';
import { startFakeAnthropic, text, toolUse, type FakeAnthropic } from './support/fake-anthropic';
import { countedClient } from './support/rpc-counter';
import { ApiDriver } from './support/scenario';
import { requireRedis, testRedisUrl, uniqueRedisPrefix } from './support/services';
import { SseClient, WsClient } from './support/stream-clients';
import { TemporalTestEnv } from './support/temporal';

const ask = (checkpoint: string) =>
  toolUse('request_human_approval', { checkpoint, summary: `Decide ${checkpoint}`, kind: 'approval' });

/** What the worker publishes may be filtered, to lose a push or a state as a real channel sometimes does. */
interface Filters {
  dropEvent?: (event: LiveEvent) => boolean;
  dropState?: (snapshot: TurnSnapshot) => boolean;
}

/**
 * Reads that do not load the worker (issue 15.2): the worker pushes each durable event and the turn's state on the live
 * channel; the API's streams of a turn share one feed and its GET answers from the published state. The API's client
 * counts its gRPC calls: a `turnEvents` or `turnState` query is a QueryWorkflow call, a workflow task on the worker.
 */
describe.each([
  [
    'in process',
    async () => ({ worker: new InProcessChannel() as LiveChannel, api: undefined as LiveChannel | undefined }),
  ],
  [
    'Redis',
    async () => {
      await requireRedis();
      const prefix = uniqueRedisPrefix('push');
      return {
        worker: new RedisChannel(testRedisUrl(), { prefix }) as LiveChannel,
        api: new RedisChannel(testRedisUrl(), { prefix }) as LiveChannel,
      };
    },
  ],
])('pushed events and published state (%s channel)', (_kind, channels) => {
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let counted: Awaited<ReturnType<typeof countedClient>>;
  let workerLive: LiveChannel;
  let apiLive: LiveChannel;
  let app: FastifyInstance;
  let api: ApiDriver;
  let base: string;
  let taskQueue: string;
  const filters: Filters = {};
  /** Per turn, the offsets of the events the worker pushed and of the states it published, in order. */
  const pushedOffsets = new Map<string, number[]>();
  const stateOffsets = new Map<string, number[]>();
  const record = (offsets: Map<string, number[]>, turnId: string, offset: number) =>
    offsets.set(turnId, [...(offsets.get(turnId) ?? []), offset]);
  const streams: SseClient[] = [];

  beforeAll(async () => {
    env = await TemporalTestEnv.connect();
    fake = await startFakeAnthropic();
    const made = await channels();
    workerLive = made.worker;
    apiLive = made.api ?? made.worker;
    counted = await countedClient(env.address);
    taskQueue = env.newTaskQueue('push');
    await env.startWorker(
      taskQueue,
      testDeps(fake.url),
      (turnId, event) => {
        if (event.type === 'log.event') record(pushedOffsets, turnId, event.event.offset);
        if (!filters.dropEvent?.(event)) workerLive.publish(turnId, event);
      },
      {
        publishState: (turnId, snapshot) => {
          record(stateOffsets, turnId, snapshot.offset);
          if (!filters.dropState?.(snapshot)) workerLive.publishState(turnId, snapshot);
        },
      },
    );
    // Every read these tests count is one the feed chose: the silent fallback (15 s) could land in a slow window.
    const feedSettings = { silentReadMs: 600_000 };
    ({ app } = await buildTestApp(
      counted.client,
      taskQueue,
      { SKILLFLOW_MAX_STREAMS_PER_KEY: '200' },
      { live: apiLive, feedSettings },
    ));
    // The worker's channel drops what it publishes before its connection opens (Redis): publish once it carries.
    const probe = { offset: 1, state: { turnId: `probe-${taskQueue}`, status: 'running' } } as unknown as TurnSnapshot;
    await eventually(
      async () => (workerLive.publishState(probe.state.turnId, probe), await apiLive.latestState(probe.state.turnId)),
      Boolean,
      10_000,
    );
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    api = new ApiDriver(app);
  });
  afterEach(() => {
    for (const stream of streams.splice(0)) stream.close();
    delete filters.dropEvent;
    delete filters.dropState;
    counted.queryDelay.ms = 0;
    expect(fake.pending).toBe(0);
  });
  afterAll(async () => {
    await app?.close();
    await workerLive?.close();
    if (apiLive !== workerLive) await apiLive?.close();
    await counted?.connection.close();
    await env?.close();
    await fake?.close();
  });

  const queries = () => counted.calls.get('QueryWorkflow') ?? 0;
  const turnStateQueries = () => counted.queries.get(turnStateQuery.name) ?? 0;
  const sse = async (turnId: string, headers: Record<string, string> = {}) => {
    const stream = await SseClient.open(`${base}/v1/turns/${turnId}/events`, { ...authHeaders(), ...headers });
    streams.push(stream);
    return stream;
  };
  const offsetsOf = (stream: SseClient) => stream.messages.filter((m) => m.id !== undefined).map((m) => Number(m.id));
  const logOf = (turnId: string) => env.client.workflow.getHandle(turnId).query(turnEventsQuery, 0);

  /** A turn that waits at checkpoint `go`; answering it lets the turn end with `Gone.`. */
  async function waitingTurn(): Promise<{ turnId: string; checkpointId: string }> {
    fake.enqueue({ content: [ask('go')] }, { content: [text('Gone.')] });
    const turnId = await api.startTurn('push me');
    const checkpoint = await api.pending(turnId);
    return { turnId, checkpointId: checkpoint.id };
  }

  /** Queries the API made while `watchers` SSE clients followed one turn from its checkpoint to its end. */
  async function queriesWith(watchers: number): Promise<number> {
    const { turnId, checkpointId } = await waitingTurn();
    const opened = await Promise.all(Array.from({ length: watchers }, () => sse(turnId)));
    await Promise.all(opened.map((stream) => stream.waitFor((event) => event.type === 'checkpoint.requested')));
    const before = queries();
    expect((await api.answer(turnId, checkpointId, { action: 'approve' })).code).toBe(200);
    await Promise.all(opened.map((stream) => stream.ended));
    // Not api.finished: its GETs, in the moment the turn's last state is published but describe still says running,
    // ask the workflow once, which is GET's cost, not the streams'.
    await env.client.workflow.getHandle(turnId).result();
    const used = queries() - before;
    const log = await logOf(turnId);
    for (const stream of opened) expect(offsetsOf(stream)).toEqual(log.map((event) => event.offset));
    return used;
  }

  it('after the catch-up, events reach every stream pushed: 100 watchers make no more queries than none', async () => {
    const none = await queriesWith(0);
    const hundred = await queriesWith(100);
    expect(none).toBe(0);
    expect(hundred).toBe(0);
  });

  it('the catch-up of 100 watchers of one turn is one log read, not one per watcher', async () => {
    const { turnId, checkpointId } = await waitingTurn();
    const before = queries();
    const opened = await Promise.all(Array.from({ length: 100 }, () => sse(turnId)));
    await Promise.all(opened.map((stream) => stream.waitFor((event) => event.type === 'checkpoint.requested')));
    // One feed, one read (a second only if a stream arrived after the feed had ended, which a waiting turn's does not).
    expect(queries() - before).toBe(1);
    expect((await api.answer(turnId, checkpointId, { action: 'approve' })).code).toBe(200);
    await Promise.all(opened.map((stream) => stream.ended));
  });

  it('WebSockets share the feed: an SSE stream and a socket on one turn cost one read, and an answer over the socket none', async () => {
    // The model takes its time after the answer (as a real one does): the answer's own events were pushed meanwhile.
    fake.enqueue({ content: [ask('go')] }, { content: [text('Gone slowly.')], delayMs: 400 });
    const turnId = await api.startTurn('push me');
    const checkpointId = (await api.pending(turnId)).id;
    const before = queries();
    const stream = await sse(turnId);
    const socket = await WsClient.open(`${base.replace('http', 'ws')}/v1/turns/${turnId}/ws`, authHeaders());
    await Promise.all([
      stream.waitFor((event) => event.type === 'checkpoint.requested'),
      socket.waitForEvent((event) => event.type === 'checkpoint.requested'),
    ]);
    expect(queries() - before).toBe(1);
    socket.send({ type: 'checkpoint', requestId: 1, checkpointId, action: 'approve' });
    expect(await socket.waitForReply(1)).toMatchObject({ type: 'ack', requestId: 1 });
    expect(await socket.closed).toEqual({ code: 1000, reason: 'turn ended' });
    await stream.ended;
    expect(queries() - before).toBe(1);
    const log = await logOf(turnId);
    expect(socket.events.filter((event) => event.offset !== undefined)).toEqual(log);
    expect(stream.events.filter((event) => event.offset !== undefined)).toEqual(log);
  });

  it('a lost push leaves a gap, which the feed fills from the log at the next push: no event lost, none twice', async () => {
    fake.enqueue({ content: [ask('one')] }, { content: [ask('two')] }, { content: [text('Gone.')] });
    const turnId = await api.startTurn('lose a push');
    const first = await api.pending(turnId);
    const stream = await sse(turnId);
    await stream.waitFor((event) => event.type === 'checkpoint.requested');
    const lostOffset = (await logOf(turnId)).length + 1;
    filters.dropEvent = (event) => event.type === 'log.event' && event.event.offset === lostOffset;
    const before = queries();
    // The read the gap causes is answered slowly (a loaded worker): the pushes that come meanwhile are in it.
    counted.queryDelay.ms = 1_500;
    expect((await api.answer(turnId, first.id, { action: 'approve' })).code).toBe(200);
    // The turn waits again: neither its end nor the silent fallback read (off here) can have brought the lost event.
    await stream.waitFor((event) => event.type === 'checkpoint.requested' && event.checkpoint.name === 'two', 10_000);
    expect(queries() - before).toBe(1);
    counted.queryDelay.ms = 0;
    const second = await api.pending(turnId, first.id);
    expect((await api.answer(turnId, second.id, { action: 'approve' })).code).toBe(200);
    await stream.ended;
    const log = await logOf(turnId);
    expect(log.map((event) => event.offset)).toContain(lostOffset);
    expect(stream.events.filter((event) => event.offset !== undefined)).toEqual(log);
  });

  it('a channel that stops delivering: the describe after 3 s of silence sees the history grow and reads the log', async () => {
    fake.enqueue({ content: [ask('one')] }, { content: [ask('two')] }, { content: [text('Gone.')] });
    const turnId = await api.startTurn('lose every push');
    const first = await api.pending(turnId);
    const stream = await sse(turnId);
    await stream.waitFor((event) => event.type === 'checkpoint.requested');
    // From here no event reaches the API pushed (a Redis subscriber reconnecting, a socket over its backlog).
    filters.dropEvent = (event) => event.type === 'log.event';
    expect((await api.answer(turnId, first.id, { action: 'approve' })).code).toBe(200);
    // The turn waits again: neither its end nor the silent fallback read (off here) can have brought the checkpoint.
    await stream.waitFor((event) => event.type === 'checkpoint.requested' && event.checkpoint.name === 'two', 20_000);
    const second = await api.pending(turnId, first.id);
    expect((await api.answer(turnId, second.id, { action: 'approve' })).code).toBe(200);
    await stream.ended;
    expect(stream.events.filter((event) => event.offset !== undefined)).toEqual(await logOf(turnId));
  });

  it('a pushed ending Temporal never recorded (a workflow task that failed) ends no stream; the real events follow', async () => {
    const { turnId, checkpointId } = await waitingTurn();
    const stream = await sse(turnId);
    await stream.waitFor((event) => event.type === 'checkpoint.requested');
    const offset = (await logOf(turnId)).length + 1;
    const before = queries();
    // What the sink of a task that then fails pushes: an ending at the next offset, while the turn still waits.
    workerLive.publish(turnId, {
      type: 'log.event',
      event: { type: 'done', output: 'phantom', offset, at: new Date().toISOString() },
    });
    // Describe keeps showing the turn running, so the feed asks the log, which has no such event.
    await Promise.race([
      stream.ended,
      eventually(
        async () => queries(),
        (count) => count > before,
      ),
    ]);
    expect(stream.events.filter((event) => event.type === 'done')).toEqual([]);
    expect((await api.answer(turnId, checkpointId, { action: 'approve' })).code).toBe(200);
    await stream.ended;
    const log = await logOf(turnId);
    expect(log.at(-1)).toMatchObject({ type: 'done', output: 'Gone.' });
    expect(stream.events.filter((event) => event.offset !== undefined)).toEqual(log);
  });

  it('a push that differs from the event delivered at its offset makes the feed read the log again', async () => {
    const { turnId, checkpointId } = await waitingTurn();
    const stream = await sse(turnId);
    await stream.waitFor((event) => event.type === 'checkpoint.requested');
    const offset = (await logOf(turnId)).length;
    const before = queries();
    // A rerun of a task whose first attempt pushed before failing writes other events at the same offsets.
    workerLive.publish(turnId, {
      type: 'log.event',
      event: { type: 'status', status: 'running', offset, at: new Date().toISOString() },
    });
    await eventually(
      async () => queries(),
      (count) => count > before,
    );
    expect((await api.answer(turnId, checkpointId, { action: 'approve' })).code).toBe(200);
    await stream.ended;
    expect(stream.events.filter((event) => event.offset !== undefined)).toEqual(await logOf(turnId));
  });

  it('Last-Event-ID resumes exactly on a feed other streams share', async () => {
    const { turnId, checkpointId } = await waitingTurn();
    const watching = await sse(turnId);
    await watching.waitFor((event) => event.type === 'checkpoint.requested');
    const resumed = await sse(turnId, { 'last-event-id': '2' });
    await resumed.waitFor((event) => event.type === 'checkpoint.requested');
    expect((await api.answer(turnId, checkpointId, { action: 'approve' })).code).toBe(200);
    await Promise.all([watching.ended, resumed.ended]);
    const offsets = (await logOf(turnId)).map((event) => event.offset);
    expect(offsetsOf(resumed)).toEqual(offsets.filter((offset) => offset > 2));
    expect(offsetsOf(watching)).toEqual(offsets);
  });

  it("the worker publishes a turn's state once per activation, with the activation's last event", async () => {
    const { turnId, checkpointId } = await waitingTurn();
    const log = await logOf(turnId);
    const states = stateOffsets.get(turnId) ?? [];
    expect(pushedOffsets.get(turnId)).toEqual(log.map((event) => event.offset));
    // The activation that asks for the checkpoint writes several events (its message, the request, the status).
    expect(states.length).toBeLessThan(log.length);
    expect(states.at(-1)).toBe(log.at(-1)!.offset);
    expect(states).toEqual([...new Set(states)].sort((a, b) => a - b));
    expect((await api.answer(turnId, checkpointId, { action: 'approve' })).code).toBe(200);
    await env.client.workflow.getHandle(turnId).result();
  });

  it('GET of a running turn answers from the published state, without a query', async () => {
    const { turnId, checkpointId } = await waitingTurn();
    const before = queries();
    for (let i = 0; i < 5; i += 1) {
      const view = await api.turn(turnId);
      expect(view.body).toMatchObject({ status: 'waiting', pendingCheckpoint: { id: checkpointId, name: 'go' } });
    }
    expect(queries() - before).toBe(0);
    expect((await api.answer(turnId, checkpointId, { action: 'approve' })).code).toBe(200);
    await api.finished(turnId);
  });

  it('GET of its session and the daily token quota read a running turn from the published state too, without a query', async () => {
    // Bob's only turn on this task queue: 1,000 tokens, then it waits at a checkpoint.
    fake.enqueue(
      { content: [ask('go')], usage: { input_tokens: 900, output_tokens: 100 } },
      { content: [text('Gone.')] },
    );
    const turnId = await api.startTurn('count me', {}, bobKey);
    const waiting = await api.waitFor(turnId, (turn) => turn.status === 'waiting', undefined, bobKey);
    const before = { turnState: turnStateQueries(), all: queries() };
    // The session records its active turn as running; the turn itself says it waits.
    const session = await app.inject({
      method: 'GET',
      url: `/v1/sessions/${sessionIdOfTurn(turnId)}`,
      headers: authHeaders(bobKey),
    });
    expect(session.json()).toMatchObject({ activeTurnId: turnId, turns: [{ id: turnId, status: 'waiting' }] });
    // The quota check of bob's next turn counts the waiting turn's tokens.
    const budgeted = (
      await buildTestApp(counted.client, taskQueue, { SKILLFLOW_USER_DAILY_TOKENS: '1000' }, { live: apiLive })
    ).app;
    try {
      const other = new ApiDriver(budgeted);
      const refused = await other.sendMessage(await other.createSession(bobKey), { message: 'more' }, bobKey);
      expect([refused.code, refused.body.error.code]).toEqual([429, 'token_budget_exhausted']);
      expect(refused.body.error.message).toMatch(/^bob has used 1,000 of 1,000 model tokens today/);
    } finally {
      await budgeted.close();
    }
    // The session's own state is a query (sessions publish none); the turn's is not.
    expect({ turnState: turnStateQueries() - before.turnState, all: queries() - before.all }).toEqual({
      turnState: 0,
      all: 1,
    });
    expect((await api.answer(turnId, waiting.pendingCheckpoint.id, { action: 'approve' }, bobKey)).code).toBe(200);
    await api.finished(turnId, undefined, bobKey);
  });

  it('GET never shows a state older than describe: when the published one lags, it asks the workflow once', async () => {
    filters.dropState = (snapshot) => snapshot.state.status === 'waiting';
    const { turnId, checkpointId } = await waitingTurn();
    const before = queries();
    const view = await api.turn(turnId);
    expect(view.body).toMatchObject({ status: 'waiting', pendingCheckpoint: { id: checkpointId } });
    expect(queries() - before).toBe(1);
    expect((await api.answer(turnId, checkpointId, { action: 'approve' })).code).toBe(200);
    await api.finished(turnId);
  });
});
