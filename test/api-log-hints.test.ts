import { TurnFollower, type StreamItem } from '../api/streams/follow-turn';
import { TurnFeeds } from '../api/streams/turn-feeds';
import { InProcessChannel, type LiveEvent } from '../lib/live';
import { testDeps } from './support/deps';
import { startFakeAnthropic, text, toolUse, type FakeAnthropic } from './support/fake-anthropic';
import { frozenWorkflowBundle } from './support/frozen-bundle';
import { countedClient } from './support/rpc-counter';
import { TemporalTestEnv } from './support/temporal';
import { answerNext, startTurn } from './support/turns';
import { legacyWorkflowTypes, workflowTypes } from '../workflows/definitions';

/**
 * Streams learn of new log entries from the worker, not from polling: with polling and the silent fallback read set to
 * once a minute, a turn's checkpoint and its ending still reach the stream within seconds, whether the worker pushes
 * the events themselves (current workflow code) or, as workers of older code do, only hints that the log grew.
 */
describe('pushed events and log hints on the live channel', () => {
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let api: Awaited<ReturnType<typeof countedClient>>;
  const live = new InProcessChannel();
  const published: LiveEvent[] = [];
  const publish = (turnId: string, event: LiveEvent) => {
    published.push(event);
    live.publish(turnId, event);
  };
  const afterCleanup: Array<() => void> = [];

  beforeAll(async () => {
    env = await TemporalTestEnv.connect();
    fake = await startFakeAnthropic();
    api = await countedClient(env.address);
  });
  afterEach(() => afterCleanup.splice(0).forEach((cleanup) => cleanup()));
  afterAll(async () => {
    await env?.close();
    await fake?.close();
    await api?.connection.close();
    await live.close();
  });

  /** Runs a turn with one checkpoint on `taskQueue` and follows it with polling all but off; the items it streamed. */
  async function followCheckpointTurn(taskQueue: string, type: string = workflowTypes.turn): Promise<StreamItem[]> {
    fake.enqueue(
      { content: [toolUse('request_human_approval', { checkpoint: 'go', summary: 'Go?', kind: 'approval' })] },
      { content: [text('Gone.')] },
    );
    const handle = await startTurn(env.client, taskQueue, 'hint me', {}, type);
    const items: StreamItem[] = [];
    const abort = new AbortController();
    const feeds = new TurnFeeds(api.client, live, { minPollMs: 60_000, maxPollMs: 60_000, silentReadMs: 60_000 });
    const follower = new TurnFollower({
      feeds,
      turnId: handle.workflowId,
      after: 0,
      send: (item) => items.push(item),
      signal: abort.signal,
    });
    const following = follower.run();
    afterCleanup.push(() => {
      abort.abort();
      feeds.close();
    });
    const waitFor = async (type: string) => {
      const deadline = Date.now() + 8_000;
      while (!items.some((item) => item.type === type)) {
        if (Date.now() > deadline)
          throw new Error(`no ${type} within 8 s: ${items.map((item) => item.type).join(', ')}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    await waitFor('checkpoint.requested');
    await answerNext(handle, { action: 'approve' });
    await waitFor('done');
    expect(await following).toBe('ended');
    return items;
  }

  it('current workers push every durable event; the stream reads the log only to catch up', async () => {
    const taskQueue = env.newTaskQueue('push');
    await env.startWorker(taskQueue, testDeps(fake.url), publish);
    published.length = 0;
    api.calls.clear();
    const items = await followCheckpointTurn(taskQueue);
    expect(items.map((item) => item.type)).toEqual([
      'status',
      'tool.start',
      'checkpoint.requested',
      'status',
      'checkpoint.resolved',
      'status',
      'tool.end',
      'message',
      'status',
      'done',
    ]);
    expect(published.filter((event) => event.type === 'log.appended')).toEqual([]);
    expect(published.filter((event) => event.type === 'log.event')).toHaveLength(items.length);
    // The catch-up read, and a second one at most when pushes of the turn's first events came before the subscription.
    expect(api.calls.get('QueryWorkflow') ?? 0).toBeLessThanOrEqual(2);
  });

  it('a worker of older code (a frozen bundle) only hints with log.appended, and the stream reads the log on each hint', async () => {
    const taskQueue = env.newTaskQueue('hints');
    await env.startWorker(taskQueue, testDeps(fake.url), publish, {
      workflowBundlePath: frozenWorkflowBundle('a45e16b'),
    });
    published.length = 0;
    const items = await followCheckpointTurn(taskQueue, legacyWorkflowTypes.turn);
    expect(items.map((item) => item.type)).toEqual(
      expect.arrayContaining(['checkpoint.requested', 'checkpoint.resolved', 'done']),
    );
    expect(items.map((item) => ('offset' in item ? item.offset : 0))).toEqual(items.map((_, index) => index + 1));
    expect(published.some((event) => event.type === 'log.appended')).toBe(true);
    expect(published.filter((event) => event.type === 'log.event')).toEqual([]);
  });
});
