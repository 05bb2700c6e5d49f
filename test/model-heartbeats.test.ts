import { DefaultLogger, Runtime } from '@temporalio/worker';
import { freePort } from '../lib/dev-server';
import { testDeps } from './support/deps';
import { startFakeAnthropic, text, toolUse, type FakeAnthropic } from './support/fake-anthropic';
import { TemporalTestEnv } from './support/temporal';
import { runTurn } from './support/turns';

/**
 * RecordActivityTaskHeartbeat calls of the worker (issue 15), from the SDK's own count of its gRPC calls by operation
 * (`temporal_request`, served for Prometheus by this file's Temporal runtime): a model call heartbeats only once it has
 * run the heartbeat throttle interval (activities/model.ts), so a turn of quick model calls sends none.
 */
describe('model call heartbeats reaching Temporal', () => {
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let taskQueue: string;
  let metricsUrl: string;

  beforeAll(async () => {
    const port = await freePort();
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    env = await TemporalTestEnv.connect({
      installRuntime: () =>
        Runtime.install({
          logger: new DefaultLogger('ERROR'),
          telemetryOptions: { metrics: { prometheus: { bindAddress: `127.0.0.1:${port}` } } },
        }),
    });
    fake = await startFakeAnthropic();
    taskQueue = env.newTaskQueue('heartbeats');
    await env.startWorker(taskQueue, testDeps(fake.url));
  });
  afterAll(async () => {
    await env?.close();
    await fake?.close();
  });

  /** The worker's RecordActivityTaskHeartbeat calls so far. */
  async function heartbeatCalls(): Promise<number> {
    const lines = (await (await fetch(metricsUrl)).text()).split('\n');
    return lines
      .filter(
        (line) => line.startsWith('temporal_request{') && line.includes('operation="RecordActivityTaskHeartbeat"'),
      )
      .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
  }

  it('a turn of three quick model calls sends none', async () => {
    fake.enqueue(
      { content: [toolUse('no_such_tool', {})] },
      { content: [toolUse('no_such_tool', {})] },
      { content: [text('It is late.')] },
    );
    const before = await heartbeatCalls();
    const { result } = await runTurn(env.client, taskQueue, 'three rounds');
    expect(result).toMatchObject({ status: 'completed', output: 'It is late.' });
    expect(fake.requests).toHaveLength(3);
    expect((await heartbeatCalls()) - before).toBe(0);
  });

  it('a model call streaming for longer than the throttle interval sends them', async () => {
    // 9 stream events 400 ms apart: at least 3.2 s.
    fake.enqueue({ content: [text('slow but steady')], delayMs: 400 });
    const before = await heartbeatCalls();
    const { result } = await runTurn(env.client, taskQueue, 'take your time');
    expect(result).toMatchObject({ status: 'completed', output: 'slow but steady' });
    expect((await heartbeatCalls()) - before).toBeGreaterThanOrEqual(1);
  });
});
