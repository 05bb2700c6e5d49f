import { TurnFollower, type StreamItem } from '../api/streams/follow-turn';
import { InProcessChannel } from '../lib/live';
import { testDeps } from './support/deps';
import { startFakeAnthropic, text, toolUse, type FakeAnthropic } from './support/fake-anthropic';
import { TemporalTestEnv } from './support/temporal';
import { answerNext, startTurn } from './support/turns';

/**
 * Streams learn of new log entries from the worker's `log.appended` hints, not from their polling: with polling set
 * to once a minute, a turn's checkpoint and its ending still reach the stream within seconds.
 */
describe('log hints on the live channel', () => {
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  const live = new InProcessChannel();
  let taskQueue: string;

  beforeAll(async () => {
    env = await TemporalTestEnv.connect();
    fake = await startFakeAnthropic();
    taskQueue = env.newTaskQueue('hints');
    await env.startWorker(taskQueue, testDeps(fake.url), (turnId, event) => live.publish(turnId, event));
  });
  const afterCleanup: Array<() => void> = [];
  afterEach(() => afterCleanup.splice(0).forEach((cleanup) => cleanup()));
  afterAll(async () => {
    await env?.close();
    await fake?.close();
    await live.close();
  });

  it('delivers a checkpoint and the ending at once, whatever the poll interval', async () => {
    fake.enqueue({ content: [toolUse('request_human_approval', { checkpoint: 'go', summary: 'Go?', kind: 'approval' })] }, { content: [text('Gone.')] });
    const handle = await startTurn(env.client, taskQueue, 'hint me');
    const items: Array<{ item: StreamItem; at: number }> = [];
    const abort = new AbortController();
    const follower = new TurnFollower({
      client: env.client,
      live,
      turnId: handle.workflowId,
      after: 0,
      send: (item) => items.push({ item, at: Date.now() }),
      signal: abort.signal,
      minPollMs: 60_000,
      maxPollMs: 60_000,
    });
    const following = follower.run();
    afterCleanup.push(() => abort.abort());
    const waitFor = async (type: string) => {
      const deadline = Date.now() + 8_000;
      while (!items.some(({ item }) => item.type === type)) {
        if (Date.now() > deadline) throw new Error(`no ${type} within 8 s: ${items.map(({ item }) => item.type).join(', ')}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    await waitFor('checkpoint.requested');
    await answerNext(handle, { action: 'approve' });
    await waitFor('done');
    expect(await following).toBe('ended');
    expect(items.map(({ item }) => item.type)).toEqual([
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
  });
});
