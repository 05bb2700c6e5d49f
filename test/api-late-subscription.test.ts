import { TurnFollower, type StreamItem } from '../api/streams/follow-turn';
import { TurnFeeds } from '../api/streams/turn-feeds';
import type { TurnSnapshot } from '../core/turn-snapshot';
import { InProcessChannel, type LiveChannel, type LiveEvent, type LiveListener } from '../lib/live';
import { turnEventsQuery, turnStateQuery } from '../workflows/definitions';
import { eventually } from './support/api';
import { testDeps } from './support/deps';
import { startFakeAnthropic, text, toolUse, type FakeAnthropic } from './support/fake-anthropic';
import { countedClient } from './support/rpc-counter';
import { TemporalTestEnv } from './support/temporal';
import { answerNext, startTurn } from './support/turns';

/** A channel whose subscriptions hold only once `confirm()` is called, as a Redis SUBSCRIBE confirmed late. */
class LateChannel implements LiveChannel {
  private confirmed = false;
  private release: () => void = () => undefined;
  private readonly confirmation = new Promise<void>((resolve) => (this.release = resolve));

  constructor(private readonly inner: LiveChannel) {}

  confirm(): void {
    this.confirmed = true;
    this.release();
  }

  publish(turnId: string, event: LiveEvent): void {
    this.inner.publish(turnId, event);
  }
  subscribe(turnId: string, listener: LiveListener): () => void {
    return this.inner.subscribe(turnId, (event) => this.confirmed && listener(event));
  }
  subscribed(): Promise<void> {
    return this.confirmation;
  }
  publishState(turnId: string, snapshot: TurnSnapshot): void {
    this.inner.publishState(turnId, snapshot);
  }
  latestState(turnId: string): Promise<TurnSnapshot | undefined> {
    return this.inner.latestState(turnId);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

/**
 * A subscription the channel confirms after the feed's catch-up read (it waits at most `subscribeWaitMs`): events
 * published between that read and the confirmation reached neither, so the confirmation makes the feed read again.
 */
describe('a live subscription confirmed late', () => {
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let api: Awaited<ReturnType<typeof countedClient>>;
  const inner = new InProcessChannel();

  beforeAll(async () => {
    env = await TemporalTestEnv.connect();
    fake = await startFakeAnthropic();
    api = await countedClient(env.address);
  });
  afterAll(async () => {
    await env?.close();
    await fake?.close();
    await api?.connection.close();
    await inner.close();
  });

  it('is followed by a read: events published before it still reach the stream', async () => {
    const taskQueue = env.newTaskQueue('late-subscribe');
    await env.startWorker(taskQueue, testDeps(fake.url), (turnId, event) => inner.publish(turnId, event));
    const ask = (checkpoint: string) =>
      toolUse('request_human_approval', { checkpoint, summary: checkpoint, kind: 'approval' });
    fake.enqueue({ content: [ask('one')] }, { content: [ask('two')] }, { content: [text('Gone.')] });
    const handle = await startTurn(env.client, taskQueue, 'subscribe late');
    const late = new LateChannel(inner);
    // No poll, no silent read, no describe within the test: only the confirmation can make the feed read again.
    const feeds = new TurnFeeds(api.client, late, {
      minPollMs: 60_000,
      maxPollMs: 60_000,
      silentReadMs: 60_000,
      describeEveryMs: 60_000,
      subscribeWaitMs: 100,
    });
    const items: StreamItem[] = [];
    const abort = new AbortController();
    const following = new TurnFollower({
      feeds,
      turnId: handle.workflowId,
      after: 0,
      send: (item) => items.push(item),
      signal: abort.signal,
    }).run();
    const requested = (name: string) =>
      items.some((item) => item.type === 'checkpoint.requested' && item.checkpoint.name === name);
    try {
      // The feed's catch-up read (a turnEvents query) is over before the answer lets the turn ask 'two'.
      await eventually(
        async () => (api.queries.get(turnEventsQuery.name) ?? 0) >= 1 && api.load.get(turnEventsQuery.name)?.now === 0,
        Boolean,
        8_000,
      );
      const first = await answerNext(handle, { action: 'approve' });
      await eventually(
        async () => (await handle.query(turnStateQuery)).pendingCheckpoint?.name,
        (name) => name === 'two',
      );
      // The feed's catch-up read was made at most at the first checkpoint; what came since was published unheard.
      expect(requested('two')).toBe(false);
      late.confirm();
      await eventually(async () => requested('two'), Boolean, 8_000);
      await answerNext(handle, { action: 'approve' }, first.id);
      expect(await following).toBe('ended');
      expect(items.filter((item) => item.type === 'checkpoint.requested')).toHaveLength(2);
    } finally {
      abort.abort();
    }
  });
});
