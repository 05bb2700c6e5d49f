import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../lib/config';
import { createApiLiveChannel, SocketBroker, type LiveChannel } from '../lib/live';
import { authHeaders, buildTestApp, eventually } from './support/api';
import { startChildWorker, type ChildWorker } from './support/child-worker';
import { bundledSkillsDir } from './support/deps';
import { startFakeAnthropic, text, type FakeAnthropic } from './support/fake-anthropic';
import { startRedisServer, type RedisServer } from './support/redis-server';
import { requireRedis, testRedisUrl } from './support/services';
import { ApiDriver } from './support/scenario';
import { SseClient } from './support/stream-clients';
import { TemporalTestEnv } from './support/temporal';

/**
 * message.delta crossing processes: the API here, the worker in another Node process. Without Redis the API serves a
 * local socket in the data dir (what `npm start` uses); with SKILLFLOW_REDIS_URL both sides use Redis pub/sub.
 */
describe('live deltas with the worker in another process', () => {
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;

  beforeAll(async () => {
    env = await TemporalTestEnv.connect();
    fake = await startFakeAnthropic();
  });
  afterAll(async () => {
    await env?.close();
    await fake?.close();
  });

  /** An API on a real port with the live channel the configuration picks, and a worker process on the same settings. */
  async function startPair(extraEnv: Record<string, string>) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-live-'));
    const taskQueue = env.newTaskQueue('live-process');
    const settings = { SKILLFLOW_DATA_DIR: dataDir, SKILLFLOW_TASK_QUEUE: taskQueue, ...extraEnv };
    const live = await createApiLiveChannel(loadConfig(settings), () => undefined);
    const { app } = await buildTestApp(env.client, taskQueue, settings, { live });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const worker = await startChildWorker({
      ...settings,
      TEMPORAL_ADDRESS: env.address,
      ANTHROPIC_BASE_URL: fake.url,
      ANTHROPIC_API_KEY: 'test-key',
      SKILLFLOW_MODEL: 'claude-test',
      SKILLFLOW_SKILLS_DIR: bundledSkillsDir,
    });
    return {
      app,
      live,
      worker,
      dataDir,
      taskQueue,
      base: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
    };
  }

  async function streamOneTurn(app: FastifyInstance, base: string, answer: string) {
    fake.enqueue({ content: [text(answer)], delayMs: 120 });
    const turnId = await new ApiDriver(app).startTurn('stream across processes');
    const stream = await SseClient.open(`${base}/v1/turns/${turnId}/events`, authHeaders());
    await stream.ended;
    return stream.events;
  }

  const deltaText = (events: Record<string, unknown>[]) =>
    events
      .filter((event) => event.type === 'message.delta')
      .map((event) => event.text)
      .join('');

  describe("default: the API's local socket", () => {
    let pair: Awaited<ReturnType<typeof startPair>>;
    let worker: ChildWorker;
    let app: FastifyInstance;
    let live: LiveChannel;

    beforeAll(async () => {
      pair = await startPair({});
      ({ worker, app, live } = pair);
    });
    afterAll(async () => {
      await worker?.stop();
      await app?.close();
      await live?.close();
    });

    it('serves the socket in the data dir and the worker process connects to it', async () => {
      expect(live).toBeInstanceOf(SocketBroker);
      const broker = live as SocketBroker;
      expect(broker.socketPath).toBe(path.join(pair.dataDir, 'live.sock'));
      expect((fs.statSync(broker.socketPath).mode & 0o777).toString(8)).toBe('600');
      await eventually(
        async () => broker.publishers,
        (count) => count === 1,
      );
    });

    it('message.delta events from the worker process reach an SSE client as the model writes', async () => {
      const events = await streamOneTurn(app, pair.base, 'Deltas crossed the process boundary.');
      expect(deltaText(events)).toBe('Deltas crossed the process boundary.');
      const types = events.map((event) => event.type);
      expect(types.lastIndexOf('message.delta')).toBeLessThan(types.indexOf('message'));
      expect(types.at(-1)).toBe('done');
    });

    it('the worker reconnects when the API restarts, and deltas flow again', async () => {
      await app.close();
      await live.close();
      const settings = loadConfig({ SKILLFLOW_DATA_DIR: pair.dataDir });
      live = await createApiLiveChannel(settings, () => undefined);
      const broker = live as SocketBroker;
      ({ app } = await buildTestApp(env.client, pair.taskQueue, { SKILLFLOW_DATA_DIR: pair.dataDir }, { live }));
      await app.listen({ port: 0, host: '127.0.0.1' });
      await eventually(
        async () => broker.publishers,
        (count) => count === 1,
        15_000,
      );
      const events = await streamOneTurn(
        app,
        `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
        'Back after a restart.',
      );
      expect(deltaText(events)).toBe('Back after a restart.');
    });
  });

  describe('with SKILLFLOW_REDIS_URL: Redis pub/sub (the running service, or SKILLFLOW_TEST_REDIS_URL)', () => {
    let pair: Awaited<ReturnType<typeof startPair>>;

    beforeAll(async () => {
      await requireRedis();
      pair = await startPair({ SKILLFLOW_REDIS_URL: testRedisUrl() });
    });
    afterAll(async () => {
      await pair?.worker.stop();
      await pair?.app.close();
      await pair?.live.close();
    });

    it('message.delta events from the worker process reach an SSE client through Redis', async () => {
      expect(fs.existsSync(path.join(pair.dataDir, 'live.sock'))).toBe(false);
      const events = await streamOneTurn(pair.app, pair.base, 'Deltas went through Redis.');
      expect(deltaText(events)).toBe('Deltas went through Redis.');
      expect(events.at(-1)).toMatchObject({ type: 'done' });
    });
  });

  describe("Redis going down and coming back (a redis-server of the test's own)", () => {
    let redis: RedisServer;
    let pair: Awaited<ReturnType<typeof startPair>>;

    beforeAll(async () => {
      redis = await startRedisServer();
      pair = await startPair({ SKILLFLOW_REDIS_URL: redis.url });
    });
    afterAll(async () => {
      await pair?.worker.stop();
      await pair?.app.close();
      await pair?.live.close();
      await redis?.stop();
    });

    it('streams fall back to polling while Redis is down, and get live deltas again once it is back', async () => {
      expect(deltaText(await streamOneTurn(pair.app, pair.base, 'Redis is up.'))).toBe('Redis is up.');

      await redis.stop();
      const down = await streamOneTurn(pair.app, pair.base, 'Redis is down.');
      expect(deltaText(down)).toBe('');
      expect(down.filter((event) => event.type === 'message').map((event) => event.text)).toEqual(['Redis is down.']);
      expect(down.at(-1)).toMatchObject({ type: 'done', output: 'Redis is down.' });

      redis = await startRedisServer(redis.port);
      // The worker's publisher and the API's subscriber reconnect on their own, within a few seconds.
      await eventually(
        async () => deltaText(await streamOneTurn(pair.app, pair.base, 'Redis is back.')),
        (text) => text === 'Redis is back.',
        30_000,
      );
    });
  });
});
