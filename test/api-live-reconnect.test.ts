import { randomBytes } from 'node:crypto';
import { TurnFollower, type StreamItem } from '../api/streams/follow-turn';
import { TurnFeeds } from '../api/streams/turn-feeds';
import type { FeedEvent } from '../core/feed-log';
import type { TurnSnapshot } from '../core/turn-snapshot';
import { RedisChannel, type LiveEvent } from '../lib/live';
import { turnEventsQuery, turnStateQuery } from '../workflows/definitions';
import { eventually } from './support/api';
import { testDeps } from './support/deps';
import { startFakeAnthropic, text, toolUse, type FakeAnthropic } from './support/fake-anthropic';
import { countedClient } from './support/rpc-counter';
import { killRedisConnection, requireRedis, testRedisUrl, uniqueRedisPrefix } from './support/services';
import { TemporalTestEnv } from './support/temporal';
import { answerNext, startTurn } from './support/turns';

/**
 * Issue 15.2: events the worker publishes while the API's Redis subscriber connection is down never reach the API.
 * Once the connection is back and Redis confirmed its subscriptions again, every open feed reads the log from what it
 * has, without waiting for the describe check. The connection is closed from Redis' side (CLIENT KILL of this test's
 * own connection on the suite's Redis); the events of the down time are the worker's pushes this test drops, since
 * ioredis reconnects within about 50 ms, too fast to publish a turn's events into the gap.
 */
describe("a feed when the API's Redis connection comes back", () => {
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let api: Awaited<ReturnType<typeof countedClient>>;
  let workerLive: RedisChannel;
  let apiLive: RedisChannel;
  const name = `skillflow-test-reconnect-${randomBytes(4).toString('hex')}`;
  /** While set, the worker's pushes of durable events are lost, as those published while the API is disconnected. */
  let dropping = false;

  beforeAll(async () => {
    await requireRedis();
    env = await TemporalTestEnv.connect();
    fake = await startFakeAnthropic();
    api = await countedClient(env.address);
    const prefix = uniqueRedisPrefix('reconnect');
    workerLive = new RedisChannel(testRedisUrl(), { prefix });
    apiLive = new RedisChannel(testRedisUrl(), { prefix, name });
    // The worker's channel drops what it publishes before its connection opens: publish once it carries.
    const probe = { offset: 1, state: { turnId: `probe-${name}`, status: 'running' } } as unknown as TurnSnapshot;
    await eventually(
      async () => (workerLive.publishState(probe.state.turnId, probe), await apiLive.latestState(probe.state.turnId)),
      Boolean,
      10_000,
    );
  });
  afterAll(async () => {
    await env?.close();
    await fake?.close();
    await api?.connection.close();
    await workerLive?.close();
    await apiLive?.close();
  });

  it('reads the log for the events pushed while it was away, and takes pushes again after', async () => {
    const taskQueue = env.newTaskQueue('reconnect');
    await env.startWorker(taskQueue, testDeps(fake.url), (turnId, event: LiveEvent) => {
      if (!(dropping && event.type === 'log.event')) workerLive.publish(turnId, event);
    });
    const ask = (checkpoint: string) =>
      toolUse('request_human_approval', { checkpoint, summary: checkpoint, kind: 'approval' });
    fake.enqueue({ content: [ask('one')] }, { content: [ask('two')] }, { content: [text('Gone.')] });
    const handle = await startTurn(env.client, taskQueue, 'reconnect');
    // No poll, no silent read, no describe within the test: only the reconnect can make the feed read again.
    const feeds = new TurnFeeds(api.client, apiLive, {
      minPollMs: 60_000,
      maxPollMs: 60_000,
      silentReadMs: 60_000,
      describeEveryMs: 60_000,
    });
    const restored: string[][] = [];
    const stopListening = apiLive.onResubscribed((turnIds) => restored.push(turnIds));
    const items: StreamItem[] = [];
    const abort = new AbortController();
    const following = new TurnFollower({
      feeds,
      turnId: handle.workflowId,
      after: 0,
      send: (item) => items.push(item),
      signal: abort.signal,
    }).run();
    const requested = (checkpoint: string) =>
      items.some((item) => item.type === 'checkpoint.requested' && item.checkpoint.name === checkpoint);
    const queries = () => api.calls.get('QueryWorkflow') ?? 0;
    try {
      await eventually(async () => requested('one'), Boolean, 10_000);
      dropping = true;
      const first = await answerNext(handle, { action: 'approve' });
      await eventually(
        async () => (await handle.query(turnStateQuery)).pendingCheckpoint?.name,
        (checkpoint) => checkpoint === 'two',
      );
      expect(requested('two')).toBe(false);
      dropping = false;
      const before = queries();
      await killRedisConnection(`${name}-subscribe`);
      await eventually(async () => requested('two'), Boolean, 10_000);
      expect(restored).toEqual([[handle.workflowId]]);
      expect(queries() - before).toBe(1);
      await answerNext(handle, { action: 'approve' }, first.id);
      expect(await following).toBe('ended');
      const log = await handle.query(turnEventsQuery, 0);
      expect(items.filter((item) => 'offset' in item)).toEqual(log);
    } finally {
      abort.abort();
      stopListening();
      feeds.close();
    }
  });
  it('reads again when the subscription held while a read was in flight: that read was answered before', async () => {
    const taskQueue = env.newTaskQueue('reconnect-in-flight');
    await env.startWorker(taskQueue, testDeps(fake.url), (turnId, event: LiveEvent) => {
      if (!(dropping && event.type === 'log.event')) workerLive.publish(turnId, event);
    });
    const ask = (checkpoint: string) =>
      toolUse('request_human_approval', { checkpoint, summary: checkpoint, kind: 'approval' });
    fake.enqueue({ content: [ask('one')] }, { content: [ask('two')] }, { content: [text('Gone.')] });
    const handle = await startTurn(env.client, taskQueue, 'reconnect in flight');
    // No poll, no silent read, no describe; a poke reads at once.
    const feeds = new TurnFeeds(api.client, apiLive, {
      minPollMs: 60_000,
      maxPollMs: 60_000,
      silentReadMs: 60_000,
      describeEveryMs: 60_000,
      pokeReadMs: 0,
    });
    const restored: string[][] = [];
    const stopListening = apiLive.onResubscribed((turnIds) => restored.push(turnIds));
    const items: FeedEvent[] = [];
    let ended!: () => void;
    const over = new Promise<void>((resolve) => (ended = resolve));
    const feed = feeds.watch(handle.workflowId, 0, {
      onEvent: (event) => items.push(event),
      onDelta() {},
      onCaughtUp() {},
      onEnd: () => ended(),
    });
    const requested = (checkpoint: string) =>
      items.some((item) => item.type === 'checkpoint.requested' && item.checkpoint.name === checkpoint);
    let release!: () => void;
    try {
      await eventually(async () => requested('one'), Boolean, 10_000);
      dropping = true;
      // A read whose answer the server gave before what follows, held on its way back to the feed.
      api.queryDelay.until = new Promise<void>((resolve) => (release = resolve));
      const answered = new Promise<void>((resolve) => (api.queryDelay.onAnswer = resolve));
      feed.poke();
      await answered;
      const first = await answerNext(handle, { action: 'approve' });
      await eventually(
        async () => (await handle.query(turnStateQuery)).pendingCheckpoint?.name,
        (checkpoint) => checkpoint === 'two',
      );
      dropping = false;
      await killRedisConnection(`${name}-subscribe`);
      // The feeds were told (their listener came first) while the read was still held.
      await eventually(
        async () => restored.length,
        (count) => count > 0,
        10_000,
      );
      api.queryDelay.until = undefined;
      api.queryDelay.onAnswer = undefined;
      release();
      await eventually(async () => requested('two'), Boolean, 10_000);
      await answerNext(handle, { action: 'approve' }, first.id);
      await over;
      expect(items).toEqual(await handle.query(turnEventsQuery, 0));
    } finally {
      api.queryDelay.until = undefined;
      api.queryDelay.onAnswer = undefined;
      release?.();
      feed.stop();
      stopListening();
      feeds.close();
    }
  });
  it('reads for every open feed, a bounded number at once, and not for one closed while it waited', async () => {
    const taskQueue = env.newTaskQueue('reconnect-many');
    await env.startWorker(taskQueue, testDeps(fake.url), (turnId, event: LiveEvent) =>
      workerLive.publish(turnId, event),
    );
    const turns = 20;
    const atOnce = 3;
    fake.enqueue(
      ...Array.from({ length: turns }, () => ({
        content: [toolUse('request_human_approval', { checkpoint: 'one', summary: 'one', kind: 'approval' })],
      })),
    );
    const handles = await Promise.all(
      Array.from({ length: turns }, (_, at) => startTurn(env.client, taskQueue, `reconnect many ${at}`)),
    );
    // No poll, no silent read, no describe within the test: only the reconnect makes the feeds read.
    const feeds = new TurnFeeds(api.client, apiLive, {
      minPollMs: 60_000,
      maxPollMs: 60_000,
      silentReadMs: 60_000,
      describeEveryMs: 60_000,
      reconnectReads: atOnce,
    });
    const waiting = new Set<string>();
    const watched = handles.map((handle) =>
      feeds.watch(handle.workflowId, 0, {
        onEvent: (event) => event.type === 'checkpoint.requested' && waiting.add(handle.workflowId),
        onDelta() {},
        onCaughtUp() {},
        onEnd() {},
      }),
    );
    // Told after the feeds (they listened first), while the first reads are in flight: the last feeds still wait.
    const closing = 5;
    const closed: string[] = [];
    const stopListening = apiLive.onResubscribed((turnIds) => {
      for (const turnId of turnIds.slice(-closing)) {
        closed.push(turnId);
        watched[handles.findIndex((handle) => handle.workflowId === turnId)].stop();
      }
    });
    const reads = (turnId: string) => api.queriesOf.get(`${turnEventsQuery.name} ${turnId}`) ?? 0;
    try {
      await eventually(
        async () => waiting.size,
        (count) => count === turns,
        30_000,
      );
      const before = handles.map((handle) => reads(handle.workflowId));
      const load = api.load.get(turnEventsQuery.name);
      if (!load) throw new Error('the feeds made no turnEvents query to catch up');
      load.max = load.now;
      // Each read takes a while, as on a loaded worker: unbounded, all of them would be in flight together.
      api.queryDelay.ms = 300;
      await killRedisConnection(`${name}-subscribe`);
      const open = () => handles.filter((handle) => !closed.includes(handle.workflowId));
      await eventually(
        async () => open().filter((handle) => reads(handle.workflowId) > before[handles.indexOf(handle)]).length,
        (count) => count === turns - closing,
        30_000,
      );
      await eventually(
        async () => load.now,
        (now) => now === 0,
        10_000,
      );
      expect(closed).toHaveLength(closing);
      expect(
        Object.fromEntries(handles.map((handle, at) => [handle.workflowId, reads(handle.workflowId) - before[at]])),
      ).toEqual(
        Object.fromEntries(handles.map((handle) => [handle.workflowId, closed.includes(handle.workflowId) ? 0 : 1])),
      );
      expect(load.max).toBe(atOnce);
    } finally {
      api.queryDelay.ms = 0;
      stopListening();
      for (const feed of watched) feed.stop();
      feeds.close();
      await Promise.all(handles.map((handle) => handle.terminate('test over').catch(() => undefined)));
    }
  });
});
