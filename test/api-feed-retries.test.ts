import { Client, type WorkflowClientInterceptor } from '@temporalio/client';
import { TurnFeeds } from '../api/streams/turn-feeds';
import type { FeedEvent } from '../core/feed-log';
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
    worker.busy = true;
    fake = await startFakeAnthropic();
  });
  afterEach(async () => {
    await fake?.close();
  });

  const ask = (checkpoint: string) => toolUse('request_human_approval', { checkpoint, summary: checkpoint, kind: 'approval' });
  const gaps = (times: number[]) => times.slice(1).map((at, index) => at - times[index]);

  it('retries after a growing pause up to the cap, reads a recovered worker within it, and starts again from retryMs', async () => {
    const taskQueue = env.newTaskQueue('feed-retries');
    await env.startWorker(taskQueue, testDeps(fake.url), (turnId, event) => live.publish(turnId, event));
    fake.enqueue({ content: [ask('one')] }, { content: [text('Done.')] });
    const handle = await startTurn(env.client, taskQueue, 'feed retries');
    await eventually(async () => (await handle.query(turnStateQuery)).pendingCheckpoint?.name, (name) => name === 'one');
    const retryMs = 40;
    const maxRetryMs = 320;
    // No poll, no silent read, no describe within the test: only failures (and the poke below) make the feed read.
    const feeds = new TurnFeeds(client, live, { retryMs, maxRetryMs, minPollMs: 60_000, maxPollMs: 60_000, silentReadMs: 60_000, describeEveryMs: 60_000, pokeReadMs: 0 });
    const items: FeedEvent[] = [];
    let caughtUp = 0;
    let ended!: () => void;
    const over = new Promise<void>((resolve) => (ended = resolve));
    const feed = feeds.watch(handle.workflowId, 0, { onEvent: (event) => items.push(event), onDelta() {}, onCaughtUp: () => (caughtUp = Date.now()), onEnd: () => ended() });
    try {
      await eventually(async () => tries.length, (count) => count >= 8, 20_000);
      const failing = tries.slice(0, 8);
      // Pauses before tries 2-4 grow from retryMs (jittered down by half at most); from the 5th on they are at the cap.
      const pauses = gaps(failing);
      for (const [at, pause] of pauses.entries()) {
        const full = Math.min(retryMs * 2 ** at, maxRetryMs);
        expect({ at, pause, atLeast: pause >= full / 2 }).toEqual({ at, pause, atLeast: true });
      }
      expect(Math.min(...pauses.slice(4))).toBeGreaterThanOrEqual(maxRetryMs / 2);
      // The worker recovers: the next try is within the cap (a little more for the describe and the query itself).
      worker.busy = false;
      const recovered = Date.now();
      await eventually(async () => caughtUp, (at) => at > 0, 5_000);
      const next = tries.find((at) => at >= recovered);
      expect(next).toBeDefined();
      expect(next! - recovered).toBeLessThanOrEqual(maxRetryMs + 200);
      expect(items.some((item) => item.type === 'checkpoint.requested')).toBe(true);
      // After a success the count starts again: a failing read is retried after retryMs at most, not after the cap.
      worker.busy = true;
      const again = tries.length;
      feed.poke();
      await eventually(async () => tries.length, (count) => count >= again + 3, 5_000);
      const restarted = gaps(tries.slice(again, again + 3));
      expect(restarted[0]).toBeLessThan(maxRetryMs / 2);
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
    await eventually(async () => (await handle.query(turnStateQuery)).pendingCheckpoint?.name, (name) => name === 'one');
    // A minute between tries: only the describes made meanwhile (every 100 ms) can end the feed within the test.
    const feeds = new TurnFeeds(client, live, { retryMs: 60_000, maxRetryMs: 60_000, minPollMs: 60_000, maxPollMs: 60_000, silentReadMs: 60_000, describeEveryMs: 100 });
    const items: FeedEvent[] = [];
    let ended!: () => void;
    const over = new Promise<void>((resolve) => (ended = resolve));
    const feed = feeds.watch(handle.workflowId, 0, { onEvent: (event) => items.push(event), onDelta() {}, onCaughtUp() {}, onEnd: () => ended() });
    try {
      await eventually(async () => tries.length, (count) => count >= 1, 10_000);
      await handle.terminate('closed while the feed waits');
      const closed = Date.now();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), 5_000)));
      expect(await Promise.race([over.then(() => 'ended' as const), late])).toBe('ended');
      clearTimeout(timer);
      expect(Date.now() - closed).toBeLessThan(5_000);
      expect(items.at(-1)).toMatchObject({ type: 'error', code: 'terminated', synthesized: true });
    } finally {
      feed.stop();
      feeds.close();
    }
  });
});
