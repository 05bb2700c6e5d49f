import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../lib/config';
import { createApiLiveChannel, createWorkerLiveChannel, type LiveChannel } from '../lib/live';
import type { OpsLevel } from '../lib/logging';
import { PostgresStore } from '../lib/store';
import { buildTestApp, eventually } from './support/api';
import { testDeps } from './support/deps';
import { startFakeAnthropic, text, toolUse, type FakeAnthropic } from './support/fake-anthropic';
import { startRedisServer, type RedisServer } from './support/redis-server';
import { ApiDriver } from './support/scenario';
import { createTestDatabase, testPostgresUrl, uniqueRedisPrefix } from './support/services';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy';
import { TemporalTestEnv } from './support/temporal';

/**
 * Issue 24.10 through the API's routes: with Redis frozen (SIGSTOP of a redis-server of the test's own, which the API's
 * rate limits and quotas, and both sides' live channel, use), a turn is read from its query and its checkpoint answered;
 * with the worker's PostgreSQL store frozen (a proxy of the test's own that stops forwarding), the turn goes on. Each
 * hang is logged once per connection, and its end at info.
 */
describe('the API while Redis or the PostgreSQL store hangs', () => {
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let redis: RedisServer;
  let database: { url: string; drop(): Promise<void> };
  let proxy: TcpProxy;
  let store: PostgresStore;
  let workerLive: LiveChannel;
  let apiLive: LiveChannel;
  let app: FastifyInstance;
  const apiOps: Array<{ line: string; level: OpsLevel }> = [];
  const storeOps: Array<{ line: string; level: OpsLevel }> = [];
  const opsInto =
    (lines: Array<{ line: string; level: OpsLevel }>) =>
    (line: string, level: OpsLevel = 'warn') =>
      void lines.push({ line, level });

  beforeAll(async () => {
    env = await TemporalTestEnv.connect();
    fake = await startFakeAnthropic();
    redis = await startRedisServer();
    database = await createTestDatabase('api_hang');
    const upstream = new URL(testPostgresUrl());
    proxy = await startTcpProxy(Number(upstream.port || 5432), upstream.hostname);
    const through = new URL(database.url);
    through.host = `${proxy.host}:${proxy.port}`;
    store = new PostgresStore(through.toString(), 'api-hang', 3_600_000, 2_000, opsInto(storeOps));

    const settings = { SKILLFLOW_REDIS_URL: redis.url, SKILLFLOW_REDIS_PREFIX: uniqueRedisPrefix('api-hang') };
    const taskQueue = env.newTaskQueue('api-hang');
    workerLive = createWorkerLiveChannel(loadConfig(settings), () => undefined);
    apiLive = await createApiLiveChannel(loadConfig(settings), opsInto(apiOps));
    await env.startWorker(
      taskQueue,
      testDeps(fake.url, { store }),
      (turnId, event) => workerLive.publish(turnId, event),
      {
        publishState: (turnId, snapshot) => workerLive.publishState(turnId, snapshot),
      },
    );
    ({ app } = await buildTestApp(env.client, taskQueue, settings, { live: apiLive, log: opsInto(apiOps) }));
  });
  afterAll(async () => {
    redis?.thaw();
    proxy?.thaw();
    await app?.close();
    await env?.close();
    await Promise.all([apiLive?.close(), workerLive?.close(), store?.close(), fake?.close()]);
    await proxy?.close();
    await redis?.stop();
    await database?.drop();
  });

  /** Settles with what `work` settles with, or 'still waiting' after `ms`: work that waits for a frozen Redis to thaw. */
  async function within<T>(ms: number, work: Promise<T>): Promise<T | 'still waiting'> {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'still waiting'>((resolve) => (timer = setTimeout(() => resolve('still waiting'), ms)));
    try {
      return await Promise.race([work, expired]);
    } finally {
      clearTimeout(timer);
    }
  }
  const ask = (checkpoint: string) => ({
    content: [toolUse('request_human_approval', { checkpoint, summary: checkpoint, kind: 'approval' })],
  });
  /** The lines matching `pattern` from the `from`th on (a loaded machine may make a service miss a deadline before the test froze it). */
  const matching = (lines: Array<{ line: string; level: OpsLevel }>, pattern: RegExp, from = 0) =>
    lines.slice(from).filter((entry) => pattern.test(entry.line));

  it('Redis frozen: GET of a waiting turn answers from its query, the checkpoint answer goes through, the turn ends; logged once, the return at info', async () => {
    const api = new ApiDriver(app);
    fake.enqueue(ask('frozen-redis'), { content: [text('Done without Redis.')] });
    const turnId = await api.startTurn('go on while Redis hangs');
    const pending = await api.pending(turnId);
    // The worker's state reached Redis, so reads take it from there (it is what the freeze takes away).
    await eventually(
      () => apiLive.latestState(turnId),
      (kept) => kept?.state.status === 'waiting',
    );

    const frozenAt = apiOps.length;
    redis.freeze();
    try {
      const read = await within(20_000, api.turn(turnId));
      expect(read).toMatchObject({ code: 200, body: { status: 'waiting', pendingCheckpoint: { id: pending.id } } });
      expect(await within(20_000, api.answer(turnId, pending.id, { action: 'approve' }))).toEqual({
        code: 200,
        body: { checkpointId: pending.id, action: 'approve', by: 'alice' },
      });
      expect(await within(30_000, api.finished(turnId))).toMatchObject({
        status: 'completed',
        output: 'Done without Redis.',
      });
      // Two connections on the request's path hung: the API's (rate limits) and the live channel's; each logged once.
      expect(
        matching(apiOps, /did not answer/, frozenAt).map(({ line, level }) => [line.replace(/ within .*/, ''), level]),
      ).toEqual(
        expect.arrayContaining([
          [`Redis at 127.0.0.1:${redis.port} did not answer`, 'warn'],
          [`live events: Redis at 127.0.0.1:${redis.port} did not answer`, 'warn'],
        ]),
      );
      expect(matching(apiOps, /did not answer/, frozenAt)).toHaveLength(2);
    } finally {
      redis.thaw();
    }
    await eventually(
      async () => matching(apiOps, /answers again/, frozenAt),
      (lines) => lines.length === 2,
    );
    expect(matching(apiOps, /answers again/, frozenAt).map((entry) => entry.level)).toEqual(['info', 'info']);
  });

  it('PostgreSQL store frozen: a checkpoint answer goes through and the turn ends; the hang is logged once, its end at info', async () => {
    const api = new ApiDriver(app);
    fake.enqueue(ask('frozen-store'), { content: [text('Done without the store.')] });
    const turnId = await api.startTurn('go on while the store hangs');
    const pending = await api.pending(turnId);

    const frozenAt = storeOps.length;
    proxy.freeze();
    try {
      expect(await within(20_000, api.answer(turnId, pending.id, { action: 'approve' }))).toMatchObject({ code: 200 });
      expect(await within(30_000, api.finished(turnId))).toMatchObject({
        status: 'completed',
        output: 'Done without the store.',
      });
      expect(matching(storeOps, /did not answer/, frozenAt)).toEqual([
        { line: expect.stringMatching(/^store: PostgreSQL at .* did not answer within 2000 ms/), level: 'warn' },
      ]);
    } finally {
      proxy.thaw();
    }
    await eventually(
      async () => matching(storeOps, /answers again/, frozenAt),
      (lines) => lines.length === 1,
    );
    expect(matching(storeOps, /answers again/, frozenAt)[0].level).toBe('info');
  });
});
