import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import Redis from 'ioredis';
import { InProcessChannel } from '../lib/live';
import { createLogger } from '../lib/logging';
import { aliceKey, authHeaders, bobKey, buildTestApp, operatorKey } from './support/api';
import { text, toolUse } from './support/fake-anthropic';
import { useWorkerHarness } from './support/harness';
import { requireRedis, testRedisUrl, uniqueRedisPrefix } from './support/services';
import { ApiDriver } from './support/scenario';
import { SseClient, WsClient, type Json } from './support/stream-clients';

const ask = (checkpoint: string) =>
  toolUse('request_human_approval', { checkpoint, summary: `Decide ${checkpoint}`, kind: 'approval' });

/** Issue 13: limits that hold before auth, across API processes, and on streams. */
describe('API hardening', () => {
  const harness = useWorkerHarness('hardening');

  async function appWith(env: Record<string, string>, options: Parameters<typeof buildTestApp>[3] = {}) {
    const { app } = await buildTestApp(harness.env.client, harness.taskQueue, env, options);
    harness.closeFirst(() => app.close());
    return app;
  }

  async function listening(app: FastifyInstance): Promise<{ http: string; ws: string }> {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const base = `127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    return { http: `http://${base}`, ws: `ws://${base}` };
  }

  /** A turn of `key`'s user, waiting at a checkpoint; `finish` answers it and waits for its end. */
  async function waitingTurn(app: FastifyInstance, key = aliceKey) {
    const api = new ApiDriver(app);
    harness.fake.enqueue({ content: [ask('hold')] });
    const turnId = await api.startTurn('wait for me', {}, key);
    await api.pending(turnId, undefined);
    return {
      turnId,
      finish: async () => {
        harness.fake.enqueue({ content: [text('done')] });
        await api.answer(turnId, 'cp-1', { action: 'approve' }, key);
        await api.finished(turnId);
      },
    };
  }

  describe('authorization header', () => {
    it('takes the Bearer scheme in any case (RFC 9110)', async () => {
      const app = await appWith({});
      for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
        const response = await app.inject({
          method: 'GET',
          url: '/v1/sessions',
          headers: { authorization: `${scheme} ${aliceKey}` },
        });
        expect({ scheme, status: response.statusCode }).toEqual({ scheme, status: 200 });
      }
      const basic = await app.inject({
        method: 'GET',
        url: '/v1/sessions',
        headers: { authorization: `Basic ${aliceKey}` },
      });
      expect(basic.statusCode).toBe(401);
    });
  });

  describe('readiness, per address', () => {
    it('readiness probes are limited per address (each one asks Temporal); liveness is not', async () => {
      const app = await appWith({ SKILLFLOW_ADDRESS_RATE_LIMIT: '3' });
      const probe = (url: string, remoteAddress = '192.0.2.10') => app.inject({ method: 'GET', url, remoteAddress });
      for (let i = 0; i < 3; i += 1) expect((await probe('/readyz')).statusCode).toBe(200);
      const limited = await probe('/readyz');
      expect([limited.statusCode, limited.json().error.code]).toEqual([429, 'rate_limited']);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect((await probe('/readyz', '192.0.2.11')).statusCode).toBe(200);
      for (let i = 0; i < 10; i += 1) expect((await probe('/healthz')).statusCode).toBe(200);
    });
  });

  describe('with Redis, several API processes share one budget per user', () => {
    const prefix = uniqueRedisPrefix('hardening-limits');
    const redis = new Redis(testRedisUrl(), { lazyConnect: true, maxRetriesPerRequest: 1 });
    beforeAll(() => requireRedis());
    afterAll(async () => {
      // Only this test's own keys: never a FLUSH on a shared Redis.
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    });

    it('requests and failed logins counted by one process count in the other', async () => {
      const env = {
        SKILLFLOW_REDIS_URL: testRedisUrl(),
        SKILLFLOW_REDIS_PREFIX: prefix,
        SKILLFLOW_RATE_LIMIT: '4',
        SKILLFLOW_ADDRESS_RATE_LIMIT: '2',
      };
      const [one, two] = [await appWith(env), await appWith(env)];
      const list = (app: FastifyInstance, key = aliceKey) =>
        app.inject({ method: 'GET', url: '/v1/sessions', headers: authHeaders(key) });
      expect((await list(one)).statusCode).toBe(200);
      expect((await list(two)).statusCode).toBe(200);
      expect((await list(one)).statusCode).toBe(200);
      expect((await list(two)).statusCode).toBe(200);
      expect((await list(one)).statusCode).toBe(429);
      expect((await list(two)).statusCode).toBe(429);
      expect((await list(two, bobKey)).statusCode).toBe(200);

      const wrong = (app: FastifyInstance) =>
        app.inject({
          method: 'GET',
          url: '/v1/sessions',
          remoteAddress: '198.51.100.4',
          headers: { authorization: 'Bearer not-a-key-0123456789abc' },
        });
      expect((await wrong(one)).statusCode).toBe(401);
      expect((await wrong(two)).statusCode).toBe(401);
      expect((await wrong(one)).statusCode).toBe(429);
      expect((await wrong(two)).statusCode).toBe(429);
      await redis.connect();
      expect((await redis.keys(`${prefix}rate:*`)).length).toBeGreaterThan(0);
    });
  });

  describe('streams', () => {
    it("WebSocket frames count against the user's rate limit, invalid ones too", async () => {
      const { turnId, finish } = await waitingTurn(await appWith({}));
      const limited = await appWith({ SKILLFLOW_RATE_LIMIT: '6' });
      const urls = await listening(limited);
      const ws = await WsClient.open(`${urls.ws}/v1/turns/${turnId}/ws`, authHeaders(aliceKey));
      await ws.waitForEvent((event) => event.type === 'checkpoint.requested');
      for (let i = 0; i < 8; i += 1) ws.send('not json');
      const deadline = Date.now() + 10_000;
      const errors = () => ws.frames.filter((frame) => frame.type === 'error');
      while (errors().length < 8 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      // The upgrade was request 1 of 6: five frames get their 400, the rest are over the limit.
      expect(errors().map((frame: Json) => frame.status)).toEqual([400, 400, 400, 400, 400, 429, 429, 429]);
      expect(errors().at(-1)).toMatchObject({ error: { code: 'rate_limited' }, retryAfter: expect.any(Number) });
      ws.close();
      await finish();
    });

    it('at most SKILLFLOW_MAX_STREAMS_PER_KEY streams per user: the next SSE, WebSocket or stream-token stream gets 429 with retry-after', async () => {
      const app = await appWith({ SKILLFLOW_MAX_STREAMS_PER_KEY: '2', SKILLFLOW_MAX_STREAMS: '3' });
      const urls = await listening(app);
      const { turnId, finish } = await waitingTurn(app);
      const sse = (key: string) => SseClient.open(`${urls.http}/v1/turns/${turnId}/events`, authHeaders(key));
      const first = await sse(aliceKey);
      const second = await SseClient.open(`${urls.http}/v1/turns/${turnId}/events`, authHeaders(aliceKey));
      const third = await sse(aliceKey).catch(
        (err: { status: number; body: string; headers: http.IncomingHttpHeaders }) => err,
      );
      expect(third).toMatchObject({ status: 429 });
      expect(JSON.parse((third as { body: string }).body).error.code).toBe('too_many_streams');
      expect(Number((third as { headers: http.IncomingHttpHeaders }).headers['retry-after'])).toBeGreaterThan(0);
      const socket = await WsClient.open(`${urls.ws}/v1/turns/${turnId}/ws`, authHeaders(aliceKey)).catch(
        (err: { status: number }) => err,
      );
      expect(socket).toMatchObject({ status: 429 });
      // A stream token of the same user opens no stream beyond the user's cap.
      const issued = await app.inject({
        method: 'POST',
        url: '/v1/stream-tokens',
        headers: authHeaders(aliceKey),
        payload: { turnId },
      });
      const byToken = await SseClient.open(`${urls.http}/v1/turns/${turnId}/events?token=${issued.json().token}`).catch(
        (err: { status: number }) => err,
      );
      expect(byToken).toMatchObject({ status: 429 });

      // Another user has its own allowance, up to the process's cap of 3.
      const operators = await WsClient.open(`${urls.ws}/v1/turns/${turnId}/ws`, authHeaders(operatorKey));
      const overProcess = await sse(operatorKey).catch((err: { status: number; body: string }) => err);
      expect(overProcess).toMatchObject({ status: 429 });
      expect(JSON.parse((overProcess as { body: string }).body).error.message).toContain('maximum of 3 open streams');

      // Closing a stream frees its place.
      first.close();
      await first.ended;
      const again = await waitForAdmission(() => sse(aliceKey));
      again.close();
      second.close();
      operators.close();
      await finish();
    });

    it('an SSE client that stops reading is disconnected instead of buffered without bound', async () => {
      const live = new InProcessChannel();
      const app = await appWith({}, { live });
      const urls = await listening(app);
      const { turnId, finish } = await waitingTurn(app);
      const delta = { type: 'message.delta' as const, text: 'x'.repeat(1024 * 1024) };
      const published = 40;

      const outcome = await new Promise<{ bytes: number; sawDone: boolean; closed: boolean }>((resolve, reject) => {
        const request = http.get(
          `${urls.http}/v1/turns/${turnId}/events`,
          { headers: { ...authHeaders(), accept: 'text/event-stream' } },
          (response) => {
            let bytes = 0;
            let seen = '';
            let flooded = false;
            response.on('data', (chunk: Buffer) => {
              bytes += chunk.length;
              if (flooded) return;
              seen += chunk.toString();
              if (!seen.includes('checkpoint.requested')) return;
              flooded = true;
              // Caught up: stop reading, and let the turn stream 40 MiB of deltas at this client.
              response.pause();
              for (let i = 0; i < published; i += 1) live.publish(turnId, delta);
              setTimeout(() => response.resume(), 500);
            });
            response.on('close', () => resolve({ bytes, sawDone: seen.includes('"type":"done"'), closed: true }));
          },
        );
        request.on('error', reject);
        setTimeout(() => reject(new Error('the stream was never cut off')), 30_000).unref();
      });
      expect(outcome.closed).toBe(true);
      expect(outcome.bytes).toBeLessThan(published * delta.text.length);
      await live.close();
      await finish();
    });
  });

  describe('stream tokens in logs', () => {
    it('are redacted from request logs', async () => {
      const lines: string[] = [];
      const app = await appWith(
        { SKILLFLOW_LOG_REQUESTS: '1' },
        { logger: createLogger('skillflow-api', 'info', { write: (line: string) => void lines.push(line) }) },
      );
      const secretToken = 'st1.c2VjcmV0LXRva2VuLXBheWxvYWQ.c2lnbmF0dXJl';
      await app.inject({
        method: 'GET',
        url: `/v1/turns/turn-0123456789abcdef0123-1/events?after=0&token=${secretToken}`,
      });
      const logged = lines.join('');
      expect(logged).toContain('token=[redacted]');
      expect(logged).not.toContain(secretToken);
    });
  });
});

/** Retries an open refused with 429 until a freed place is seen (a closed stream is released asynchronously). */
async function waitForAdmission<T>(open: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      return await open();
    } catch (err) {
      if ((err as { status?: number }).status !== 429 || Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
