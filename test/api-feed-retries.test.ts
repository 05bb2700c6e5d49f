import { Client, type WorkflowClientInterceptor } from '@temporalio/client';
import { TurnFeeds } from '../api/streams/turn-feeds';
import type { FeedEvent } from '../core/feed-log';
import { readRetryMs } from '../core/read-backoff';
import { InProcessChannel } from '../lib/live';
import { turnEventsQuery, turnStateQuery } from '../workflows/definitions';
import { eventually } from './support/api';
import { testDeps } from './support/deps';
import { startFakeAnthropic, text, toolUse, type FakeAnthropic } from './support/fake-anthropic';
import { TemporalTestEnv } from './support/temporal';
import { answerNext, startTurn } from './support/turns';

/**
 * A feed whose reads of the log fail (a worker too busy to answer the `turnEvents` query within its deadline, here a
 * query the client refuses at once): the next try comes after a pause that doubles with each failure in a row, up to
 * `maxRetryMs`, and starts again after a read that succeeds (core/read-backoff.ts); meanwhile the turn is still
 * described, so a feed of a turn that closes ends without waiting out the pause.
 */
// The rule as it is, recorded: the feed's pauses are checked as what it asked the rule (how many failures in a row,
// with which settings) and what it got, not against the wall clock (core/read-backoff.ts has the rule's own table).
jest.mock('../core/read-backoff', () => {
  const actual = jest.requireActual<typeof import('../core/read-backoff')>('../core/read-backoff');
  return { ...actual, readRetryMs: jest.fn(actual.readRetryMs) };
});
const rule = jest.mocked(readRetryMs);

describe('a feed whose reads fail', () => {
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  const live = new InProcessChannel();
  /** While set, turnEvents queries fail; every one tried is timed in `tries`. */
  const worker = { busy: true };
  let tries: number[] = [];
  let client: Client;

  beforeAll(async () => {
    env = await TemporalTestEnv.connect();
    const refuse: WorkflowClientInterceptor = {
      query: async (input, next) => {
        if (input.queryType === turnEventsQuery.name) {
          tries.push(Date.now());
          if (worker.busy) throw new Error('test: the worker did not answer in time');
        }
        return next(input);
      },
    };
    client = new Client({ connection: env.connection, interceptors: { workflow: [refuse] } });
  });
  afterAll(async () => {
    await env?.close();
    await live.close();
  });
  // A model of its own for each test: what one leaves queued does not answer the next.
  beforeEach(async () => {
    tries = [];
    rule.mockClear();
    worker.busy = true;
    fake = await startFakeAnthropic();
  });
  afterEach(async () => {
    await fake?.close();
  });

  const ask = (checkpoint: string) =>
    toolUse('request_human_approval', { checkpoint, summary: checkpoint, kind: 'approval' });
  const gaps = (times: number[]) => times.slice(1).map((at, index) => at - times[index]);

  it('retries after a growing pause up to the cap, reads a recovered worker at the next try, and starts again from retryMs', async () => {
    const taskQueue = env.newTaskQueue('feed-retries');
    await env.startWorker(taskQueue, testDeps(fake.url), (turnId, event) => live.publish(turnId, event));
    fake.enqueue({ content: [ask('one')] }, { content: [text('Done.')] });
    const handle = await startTurn(env.client, taskQueue, 'feed retries');
    await eventually(
      async () => (await handle.query(turnStateQuery)).pendingCheckpoint?.name,
      (name) => name === 'one',
    );
    const backoff = { retryMs: 40, maxRetryMs: 320 };
    // No poll, no silent read, no describe within the test: only failures (and the poke below) make the feed read.
    const feeds = new TurnFeeds(client, live, {
      ...backoff,
      minPollMs: 60_000,
      maxPollMs: 60_000,
      silentReadMs: 60_000,
      describeEveryMs: 60_000,
      pokeReadMs: 0,
    });
    const items: FeedEvent[] = [];
    let caughtUp = false;
    let ended!: () => void;
    const over = new Promise<void>((resolve) => (ended = resolve));
    const feed = feeds.watch(handle.workflowId, 0, {
      onEvent: (event) => items.push(event),
      onDelta() {},
      onCaughtUp: () => (caughtUp = true),
      onEnd: () => ended(),
    });
    /** What the feed asked the rule after failures `from` to `to` (one call a failed try), and the pauses it got. */
    const asked = (from: number, to: number) =>
      rule.mock.calls.slice(from, to).map(([failures, settings]) => ({ failures, ...settings }));
    const given = (from: number, to: number) =>
      rule.mock.results.slice(from, to).map((result) => result.value as number);
    /**
     * The `count` pauses given from the `pause`th on that were not waited out: the try after each (from the `tryAt`th
     * on, the one that failed) came sooner than the pause. A lower bound only, which a loaded machine cannot break.
     */
    const cutShort = (tryAt: number, pause: number, count: number) => {
      const pauses = given(pause, pause + count);
      return gaps(tries.slice(tryAt, tryAt + count + 1))
        .map((gap, at) => ({ at, gap, pause: pauses[at] }))
        .filter(({ gap, pause }) => gap < pause);
    };
    try {
      await eventually(
        async () => rule.mock.calls.length,
        (count) => count >= 7,
        20_000,
      );
      // Failures in a row counted up, with the feed's settings: pauses that double from retryMs to the cap (from the 4th).
      expect(asked(0, 7)).toEqual(
        [1, 2, 3, 4, 5, 6, 7].map((failures) => expect.objectContaining({ failures, ...backoff })),
      );
      expect(cutShort(0, 0, 6)).toEqual([]);
      // The worker recovers: the next try reads the log (one try more, no failure more). Nothing else makes the feed
      // read before its 60-s poll, so catching up within 10 s (far from that poll, far above the 320-ms cap) is that
      // try's doing; when it came is the pause the rule gave, at most the cap.
      worker.busy = false;
      const failed = tries.length;
      await eventually(
        async () => caughtUp,
        (done) => done,
        10_000,
      );
      expect({ tries: tries.length, pauses: rule.mock.calls.length }).toEqual({ tries: failed + 1, pauses: failed });
      expect(items.some((item) => item.type === 'checkpoint.requested')).toBe(true);
      // After a success the count starts again: the failures that follow are the 1st and 2nd in a row, not counted on.
      worker.busy = true;
      const again = tries.length;
      feed.poke();
      await eventually(
        async () => rule.mock.calls.length,
        (count) => count >= failed + 2,
        10_000,
      );
      expect(asked(failed, failed + 2).map(({ failures }) => failures)).toEqual([1, 2]);
      expect(cutShort(again, failed, 1)).toEqual([]);
      worker.busy = false;
      await answerNext(handle, { action: 'approve' });
      await over;
      expect(items).toEqual(await handle.query(turnEventsQuery, 0));
    } finally {
      feed.stop();
      feeds.close();
      await handle.terminate('test over').catch(() => undefined);
    }
  });

  it('ends promptly when the turn closes during a long pause', async () => {
    const taskQueue = env.newTaskQueue('feed-retries-close');
    await env.startWorker(taskQueue, testDeps(fake.url), (turnId, event) => live.publish(turnId, event));
    fake.enqueue({ content: [ask('one')] });
    const handle = await startTurn(env.client, taskQueue, 'feed retries close');
    await eventually(
      async () => (await handle.query(turnStateQuery)).pendingCheckpoint?.name,
      (name) => name === 'one',
    );
    // Ten minutes between tries: only the describes made meanwhile (every 100 ms) can end the feed within the test.
    const feeds = new TurnFeeds(client, live, {
      retryMs: 600_000,
      maxRetryMs: 600_000,
      minPollMs: 60_000,
      maxPollMs: 60_000,
      silentReadMs: 60_000,
      describeEveryMs: 100,
    });
    const items: FeedEvent[] = [];
    let ended!: () => void;
    const over = new Promise<void>((resolve) => (ended = resolve));
    const feed = feeds.watch(handle.workflowId, 0, {
      onEvent: (event) => items.push(event),
      onDelta() {},
      onCaughtUp() {},
      onEnd: () => ended(),
    });
    try {
      // The first read failed and the feed took its pause: it waits out the pause from here on.
      await eventually(
        async () => rule.mock.calls.length,
        (count) => count >= 1,
        10_000,
      );
      await handle.terminate('closed while the feed waits');
      // No event says the pause was not waited out: a deadline does, far above the describes' 100 ms however loaded the
      // machine, and far below the 10-minute pause (and within the test's timeout).
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), 30_000)));
      expect(await Promise.race([over.then(() => 'ended' as const), late])).toBe('ended');
      clearTimeout(timer);
      expect(items.at(-1)).toMatchObject({ type: 'error', code: 'terminated', synthesized: true });
    } finally {
      feed.stop();
      feeds.close();
    }
  });
});
