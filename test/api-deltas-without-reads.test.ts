import { Client, type WorkflowClientInterceptor } from '@temporalio/client';
import { TurnFollower, type StreamItem } from '../api/streams/follow-turn';
import { TurnFeeds } from '../api/streams/turn-feeds';
import { InProcessChannel, type LiveEvent } from '../lib/live';
import { livePublisher } from '../worker/model-deps';
import { turnEventsQuery } from '../workflows/definitions';
import { testDeps } from './support/deps';
import { startFakeAnthropic, text, type FakeAnthropic } from './support/fake-anthropic';
import { TemporalTestEnv } from './support/temporal';
import { startTurn } from './support/turns';

/**
 * A stream holds live deltas until it has caught up with the turn's log, which a read (a `turnEvents` query, answered
 * by the worker) used to be the only way to show. A worker too busy to answer queries then held a turn's text back from
 * its streams until the turn ended (or dropped it, when a read at the end brought the ending), though every event of
 * its log reached them pushed. Pushes that reach the feed from the turn's first event on leave nothing for a read to
 * bring: the stream is caught up.
 */
describe('live deltas when the log cannot be read', () => {
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  const channel = new InProcessChannel();

  beforeAll(async () => {
    env = await TemporalTestEnv.connect();
    fake = await startFakeAnthropic();
  });
  afterAll(async () => {
    await env?.close();
    await fake?.close();
    await channel.close();
  });

  it('reach a stream whose feed had every event pushed from the first, while every read fails', async () => {
    // The worker's pushes wait until the stream follows the turn, so the feed hears the turn's first event.
    const held: Array<[string, LiveEvent]> = [];
    let following = false;
    const publish = (turnId: string, event: LiveEvent) => (following ? channel.publish(turnId, event) : held.push([turnId, event]));
    const taskQueue = env.newTaskQueue('deltas-without-reads');
    const deps = testDeps(fake.url);
    await env.startWorker(taskQueue, { ...deps, model: { ...deps.model, publishDelta: livePublisher(channel) } }, publish);

    let failedReads = 0;
    const noReads: WorkflowClientInterceptor = {
      query: async (input, next) => {
        if (input.queryType !== turnEventsQuery.name) return next(input);
        failedReads += 1;
        throw new Error('the worker does not answer queries');
      },
    };
    const client = new Client({ connection: env.client.connection, interceptors: { workflow: [noReads] } });
    let startAnswer!: () => void;
    const answering = new Promise<void>((resolve) => (startAnswer = resolve));
    fake.respond(async () => {
      await answering;
      return { content: [text('Every word of this answer is streamed.')] };
    });

    const handle = await startTurn(env.client, taskQueue, 'Say something.');
    const feeds = new TurnFeeds(client, channel);
    const items: StreamItem[] = [];
    const abort = new AbortController();
    const followed = new TurnFollower({ feeds, turnId: handle.workflowId, after: 0, send: (item) => items.push(item), signal: abort.signal }).run();
    following = true;
    for (const [turnId, event] of held.splice(0)) channel.publish(turnId, event);
    startAnswer();
    try {
      expect(await followed).toBe('ended');
    } finally {
      abort.abort();
    }

    expect(failedReads).toBeGreaterThan(0);
    const deltas = items.filter((item) => item.type === 'message.delta');
    expect(deltas.map((item) => (item.type === 'message.delta' ? item.text : '')).join('')).toBe('Every word of this answer is streamed.');
    // Live, not after the turn's end: before the durable message that carries the same text.
    const message = items.findIndex((item) => item.type === 'message');
    expect(message).toBeGreaterThan(items.indexOf(deltas.at(-1)!));
    expect(items.at(-1)).toMatchObject({ type: 'done' });
  });
});
