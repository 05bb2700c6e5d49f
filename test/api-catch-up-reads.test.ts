import { TurnFeeds } from '../api/streams/turn-feeds';
import { InProcessChannel } from '../lib/live';
import { turnEventsQuery, turnStateQuery } from '../workflows/definitions';
import { eventually } from './support/api';
import { testDeps } from './support/deps';
import { startFakeAnthropic, toolUse, type FakeAnthropic } from './support/fake-anthropic';
import { countedClient } from './support/rpc-counter';
import { TemporalTestEnv } from './support/temporal';
import { startTurn } from './support/turns';

/**
 * Streams of many turns opened together: each new feed reads the turn's log once to catch up (a `turnEvents` query, a
 * workflow task on the worker). Those reads go `catchUpReads` at a time per process, as reads after a reconnect do
 * (core/reread-queue.ts); a feed alone reads at once, and a feed stopped while it waits leaves the queue unread.
 */
describe('catch-up reads of feeds opened together', () => {
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let api: Awaited<ReturnType<typeof countedClient>>;
  const live = new InProcessChannel();

  beforeAll(async () => {
    env = await TemporalTestEnv.connect();
    fake = await startFakeAnthropic();
    api = await countedClient(env.address);
  });
  afterAll(async () => {
    await env?.close();
    await fake?.close();
    await api?.connection.close();
    await live.close();
  });

  const ask = () => ({
    content: [toolUse('request_human_approval', { checkpoint: 'one', summary: 'one', kind: 'approval' })],
  });
  const reads = (turnId: string) => api.queriesOf.get(`${turnEventsQuery.name} ${turnId}`) ?? 0;

  /** Turns started on a worker of their own, each once it waits at its checkpoint `one`. */
  async function turnsAtCheckpoint(queue: string, messages: string[]) {
    const taskQueue = env.newTaskQueue(queue);
    await env.startWorker(taskQueue, testDeps(fake.url), (turnId, event) => live.publish(turnId, event));
    fake.enqueue(...messages.map(ask));
    const handles = await Promise.all(messages.map((message) => startTurn(env.client, taskQueue, message)));
    for (const handle of handles)
      await eventually(
        async () => (await handle.query(turnStateQuery)).pendingCheckpoint?.name,
        (name) => name === 'one',
      );
    return handles;
  }
  // No poll, no silent read, no describe within the test: only the catch-up read makes a feed query.
  const quiet = { minPollMs: 60_000, maxPollMs: 60_000, silentReadMs: 60_000, describeEveryMs: 60_000 };

  it('go a bounded number at once, every open feed catches up, and one stopped while it waits makes no read', async () => {
    const turns = 12;
    const atOnce = 3;
    const stopping = 4;
    const handles = await turnsAtCheckpoint(
      'catch-up-many',
      Array.from({ length: turns }, (_, at) => `catch up ${at}`),
    );
    const feeds = new TurnFeeds(api.client, live, { ...quiet, catchUpReads: atOnce });
    const caughtUp = new Set<string>();
    const load = { now: 0, max: 0 };
    api.load.set(turnEventsQuery.name, load);
    // Each read takes a while, as on a loaded worker: unbounded, all of them would be in flight together.
    api.queryDelay.ms = 300;
    const watched = handles.map((handle) =>
      feeds.watch(handle.workflowId, 0, {
        onEvent() {},
        onDelta() {},
        onCaughtUp: () => caughtUp.add(handle.workflowId),
        onEnd() {},
      }),
    );
    const stopped = handles.slice(-stopping).map((handle) => handle.workflowId);
    try {
      // The first reads are in flight: the last feeds still wait for a place, and their streams go away.
      await eventually(
        async () => load.now,
        (now) => now > 0,
        10_000,
      );
      for (const feed of watched.slice(-stopping)) feed.stop();
      const open = handles.filter((handle) => !stopped.includes(handle.workflowId));
      await eventually(
        async () => open.filter((handle) => caughtUp.has(handle.workflowId)).length,
        (count) => count === turns - stopping,
        30_000,
      );
      await eventually(
        async () => load.now,
        (now) => now === 0,
        10_000,
      );
      expect(load.max).toBe(atOnce);
      expect(Object.fromEntries(handles.map((handle) => [handle.workflowId, reads(handle.workflowId)]))).toEqual(
        Object.fromEntries(handles.map((handle) => [handle.workflowId, stopped.includes(handle.workflowId) ? 0 : 1])),
      );
    } finally {
      api.queryDelay.ms = 0;
      for (const feed of watched) feed.stop();
      feeds.close();
      await Promise.all(handles.map((handle) => handle.terminate('test over').catch(() => undefined)));
    }
  });

  it('a feed alone reads at once; one opened while the only place is taken reads when it is free', async () => {
    const [first, second] = await turnsAtCheckpoint('catch-up-alone', ['catch up first', 'catch up second']);
    // A feed waiting for a place describes its turn every describeEveryMs (and only then, before its read): the test
    // sees it waiting by those describes.
    const feeds = new TurnFeeds(api.client, live, { ...quiet, describeEveryMs: 100, catchUpReads: 1 });
    const caughtUp = new Set<string>();
    const watcher = (turnId: string) => ({
      onEvent() {},
      onDelta() {},
      onCaughtUp: () => caughtUp.add(turnId),
      onEnd() {},
    });
    let release!: () => void;
    const watched = [];
    try {
      // The first feed's read is answered by the server and held on its way back: it keeps the only place.
      api.queryDelay.until = new Promise<void>((resolve) => (release = resolve));
      const answered = new Promise<void>((resolve) => (api.queryDelay.onAnswer = resolve));
      watched.push(feeds.watch(first.workflowId, 0, watcher(first.workflowId)));
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), 5_000)));
      expect(await Promise.race([answered.then(() => 'answered' as const), late])).toBe('answered');
      clearTimeout(timer);
      expect(reads(first.workflowId)).toBe(1);
      const load = api.load.get(turnEventsQuery.name);
      if (!load) throw new Error('the first feed made no turnEvents query');
      load.max = load.now;
      watched.push(feeds.watch(second.workflowId, 0, watcher(second.workflowId)));
      // The first read stays held (a loaded worker) until the second feed has described its turn twice. A feed that did
      // not wait for the place (its subscription holds at once on this channel) would describe once, just before its
      // read, and query as that describe returns: it could not describe again before its read came back, held here.
      // Two describes with no read show it waiting for the place instead.
      const waiting = async () => ({
        describes: api.describesOf.get(second.workflowId) ?? 0,
        reads: reads(second.workflowId),
      });
      const seen = await eventually(waiting, (now) => now.describes >= 2 || now.reads > 0, 10_000);
      expect({ waited: seen.describes >= 2, reads: seen.reads }).toEqual({ waited: true, reads: 0 });
      api.queryDelay.until = undefined;
      api.queryDelay.onAnswer = undefined;
      release();
      await eventually(
        async () => caughtUp.size,
        (size) => size === 2,
        10_000,
      );
      expect([reads(first.workflowId), reads(second.workflowId), load.max]).toEqual([1, 1, 1]);
    } finally {
      api.queryDelay.until = undefined;
      api.queryDelay.onAnswer = undefined;
      release?.();
      for (const feed of watched) feed.stop();
      feeds.close();
      await Promise.all([first, second].map((handle) => handle.terminate('test over').catch(() => undefined)));
    }
  });

  it('a feed waiting for a place still describes its turn: it ends when the turn closes, without its read', async () => {
    const [first, second] = await turnsAtCheckpoint('catch-up-closed', ['holds the place', 'closes while queued']);
    const feeds = new TurnFeeds(api.client, live, { ...quiet, describeEveryMs: 200, catchUpReads: 1 });
    let ended = false;
    let caughtUpFirst = false;
    let release!: () => void;
    const watched = [];
    try {
      // The first feed's read is held on its way back: it keeps the only place for the whole test.
      api.queryDelay.until = new Promise<void>((resolve) => (release = resolve));
      const answered = new Promise<void>((resolve) => (api.queryDelay.onAnswer = resolve));
      watched.push(
        feeds.watch(first.workflowId, 0, {
          onEvent() {},
          onDelta() {},
          onCaughtUp: () => (caughtUpFirst = true),
          onEnd() {},
        }),
      );
      await answered;
      // Only that answer is held: the closed turn's log can be read once its feed finds the turn closed.
      api.queryDelay.until = undefined;
      api.queryDelay.onAnswer = undefined;
      watched.push(
        feeds.watch(second.workflowId, 0, { onEvent() {}, onDelta() {}, onCaughtUp() {}, onEnd: () => (ended = true) }),
      );
      await second.terminate('closed while its feed waits for a place');
      await eventually(
        async () => ended,
        (done) => done,
        10_000,
      );
      // Ended by describing the closed turn (its log read then), while the other feed still held the place.
      expect([reads(first.workflowId), caughtUpFirst]).toEqual([1, false]);
    } finally {
      api.queryDelay.until = undefined;
      api.queryDelay.onAnswer = undefined;
      release?.();
      for (const feed of watched) feed.stop();
      feeds.close();
      await first.terminate('test over').catch(() => undefined);
    }
  });
});
