import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { fingerprint, resolveApiKeys } from '../api/auth';
import { StreamTokens } from '../api/stream-tokens';
import { loadConfig, type Config } from '../lib/config';
import { turnEventsQuery } from '../workflows/definitions';
import { aliceKey, authHeaders, bobKey, buildTestApp, eventually, operatorKey } from './support/api';
import { text, toolUse, type FakeAnthropic } from './support/fake-anthropic';
import { ApiDriver } from './support/scenario';
import { SseClient, WsClient } from './support/stream-clients';
import { useWorkerHarness } from './support/harness';
import type { TemporalTestEnv } from './support/temporal';

const ask = (checkpoint: string) =>
  toolUse('request_human_approval', { checkpoint, summary: `Decide ${checkpoint}`, kind: 'approval' });

/** Who may do what: keys, users, the operator role, and stream tokens for browsers. */
describe('API auth', () => {
  const harness = useWorkerHarness('auth');
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let app: FastifyInstance;
  let api: ApiDriver;
  let taskQueue: string;
  let base: string;
  let config: Config;
  const others: FastifyInstance[] = [];
  const secret = Buffer.from('the stream token secret of these tests, 32+ bytes');

  beforeAll(async () => {
    ({ env, fake, taskQueue } = harness);
    ({ app, config } = await buildTestApp(env.client, taskQueue, {}, { streamTokenSecret: secret }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    api = new ApiDriver(app);
  });
  harness.closeFirst(async () => {
    for (const other of others) await other.close();
    await app?.close();
  });

  const as = (key: string | null, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: Record<string, unknown>) =>
    app.inject({ method, url, headers: key ? authHeaders(key) : {}, ...(payload ? { payload } : {}) });
  const errorOf = (response: { statusCode: number; json(): { error: { code: string } } }) => [
    response.statusCode,
    response.json().error.code,
  ];

  /** Alice's turn waiting at a checkpoint. */
  async function aliceWaiting(name = 'alice_decides'): Promise<{ sessionId: string; turnId: string }> {
    fake.enqueue({ content: [ask(name)] });
    const sessionId = await api.createSession(aliceKey);
    const turnId = (await api.sendMessage(sessionId, { message: 'needs a decision' }, aliceKey)).body.id;
    await api.pending(turnId);
    return { sessionId, turnId };
  }

  async function finish(turnId: string): Promise<void> {
    fake.enqueue({ content: [text('finished')] });
    await api.answer(turnId, 'cp-1', { action: 'approve' });
    await api.finished(turnId);
  }

  it('a missing key is a 401 on every API route; health, readiness and the docs need none', async () => {
    const routes: Array<['GET' | 'POST' | 'DELETE', string]> = [
      ['POST', '/v1/sessions'],
      ['GET', '/v1/sessions'],
      ['GET', '/v1/sessions/0123456789abcdef0123'],
      ['DELETE', '/v1/sessions/0123456789abcdef0123'],
      ['POST', '/v1/sessions/0123456789abcdef0123/turns'],
      ['GET', '/v1/turns'],
      ['GET', '/v1/turns/turn-0123456789abcdef0123-1'],
      ['GET', '/v1/turns/turn-0123456789abcdef0123-1/events'],
      ['POST', '/v1/turns/turn-0123456789abcdef0123-1/cancel'],
      ['POST', '/v1/turns/turn-0123456789abcdef0123-1/checkpoints/cp-1'],
      ['POST', '/v1/stream-tokens'],
      ['GET', '/v1/skills'],
      ['GET', '/v1/skills/code-review'],
    ];
    for (const [method, url] of routes) {
      const response = await as(null, method, url);
      expect({ route: `${method} ${url}`, status: response.statusCode, body: response.json() }).toEqual({
        route: `${method} ${url}`,
        status: 401,
        body: {
          error: {
            code: 'unauthorized',
            message: 'Send your API key as "Authorization: Bearer <key>".',
            requestId: expect.any(String),
          },
        },
      });
    }
    for (const url of ['/healthz', '/readyz', '/openapi.json', '/docs/'])
      expect((await as(null, 'GET', url)).statusCode).toBe(200);
  });

  it('a wrong key, or another scheme, is a 401', async () => {
    const wrong = await app.inject({
      method: 'GET',
      url: '/v1/turns',
      headers: { authorization: 'Bearer not-a-key-at-all-0123456789' },
    });
    expect(wrong.json()).toEqual({
      error: { code: 'unauthorized', message: 'That API key is not valid.', requestId: wrong.headers['x-request-id'] },
    });
    expect(wrong.statusCode).toBe(401);
    const basic = await app.inject({
      method: 'GET',
      url: '/v1/turns',
      headers: { authorization: `Basic ${aliceKey}` },
    });
    expect(basic.statusCode).toBe(401);
  });

  it("another user's session and turn are 404s, whatever the route", async () => {
    const { sessionId, turnId } = await aliceWaiting();
    expect(errorOf(await as(bobKey, 'GET', `/v1/sessions/${sessionId}`))).toEqual([404, 'not_found']);
    expect(errorOf(await as(bobKey, 'DELETE', `/v1/sessions/${sessionId}`))).toEqual([404, 'not_found']);
    expect(errorOf(await as(bobKey, 'POST', `/v1/sessions/${sessionId}/turns`, { message: 'hijack' }))).toEqual([
      404,
      'not_found',
    ]);
    expect(errorOf(await as(bobKey, 'GET', `/v1/turns/${turnId}`))).toEqual([404, 'not_found']);
    expect(errorOf(await as(bobKey, 'POST', `/v1/turns/${turnId}/cancel`))).toEqual([404, 'not_found']);
    expect(errorOf(await as(bobKey, 'GET', `/v1/turns/${turnId}/events`))).toEqual([404, 'not_found']);
    expect(errorOf(await as(bobKey, 'POST', '/v1/stream-tokens', { turnId }))).toEqual([404, 'not_found']);
    const bobsList = (await as(bobKey, 'GET', `/v1/turns?session=${sessionId}`)).json();
    expect(bobsList.turns).toEqual([]);
    const bobsSessions = (await as(bobKey, 'GET', '/v1/sessions?limit=100&user=alice')).json();
    expect(bobsSessions.sessions.some((s: { id: string }) => s.id === sessionId)).toBe(false);
    expect((await api.turn(turnId)).body.status).toBe('waiting');
    await finish(turnId);
  });

  it("another user's checkpoint cannot be answered (404) and stays pending for its owner", async () => {
    const { turnId } = await aliceWaiting('not_bobs');
    const bob = await api.answer(turnId, 'cp-1', { action: 'cancel' }, bobKey);
    expect([bob.code, bob.body.error.code]).toEqual([404, 'not_found']);
    expect((await api.turn(turnId)).body).toMatchObject({ status: 'waiting', pendingCheckpoint: { id: 'cp-1' } });
    await finish(turnId);
  });

  it("operators see everyone's waiting turns (the inbox), answer them, and the decision records the operator", async () => {
    const { sessionId, turnId } = await aliceWaiting('for_the_operator');
    const inbox = await eventually(
      async () => (await as(operatorKey, 'GET', '/v1/turns?status=waiting&limit=100')).json(),
      (page) => page.turns.some((t: { id: string }) => t.id === turnId),
    );
    expect(inbox.turns.find((t: { id: string }) => t.id === turnId)).toMatchObject({
      userId: 'alice',
      status: 'waiting',
      checkpoint: 'for_the_operator',
    });
    const onlyAlice = (await as(operatorKey, 'GET', `/v1/turns?status=waiting&user=alice&session=${sessionId}`)).json();
    expect(onlyAlice.turns.map((t: { id: string }) => t.id)).toEqual([turnId]);
    expect((await as(operatorKey, 'GET', '/v1/turns?user=bob&session=' + sessionId)).json().turns).toEqual([]);
    const bobInbox = (await as(bobKey, 'GET', '/v1/turns?status=waiting&user=alice&limit=100')).json();
    expect(bobInbox.turns.some((t: { id: string }) => t.id === turnId)).toBe(false);
    expect((await as(operatorKey, 'GET', `/v1/sessions/${sessionId}`)).statusCode).toBe(200);
    expect((await as(operatorKey, 'GET', `/v1/turns/${turnId}`)).json()).toMatchObject({ status: 'waiting' });

    fake.enqueue({ content: [text('An operator approved.')] });
    expect(await api.answer(turnId, 'cp-1', { action: 'approve' }, operatorKey)).toEqual({
      code: 200,
      body: { checkpointId: 'cp-1', action: 'approve', by: 'ops' },
    });
    expect(await api.finished(turnId)).toMatchObject({ status: 'completed', output: 'An operator approved.' });
    const events = await env.client.workflow.getHandle(turnId).query(turnEventsQuery, 0);
    expect(events.find((event) => event.type === 'checkpoint.resolved')).toMatchObject({
      by: 'ops',
      action: 'approve',
    });
  });

  describe('stream tokens', () => {
    it("open SSE and WebSocket streams without a header, for that turn only, for the turn's user", async () => {
      const { turnId } = await aliceWaiting('token_turn');
      const issued = await as(aliceKey, 'POST', '/v1/stream-tokens', { turnId });
      expect(issued.statusCode).toBe(201);
      const { token, expiresAt, scope } = issued.json();
      expect(scope).toBe('read');
      expect(Date.parse(expiresAt) - Date.now()).toBeGreaterThan(config.streamTokenTtlMs - 60_000);
      expect(Date.parse(expiresAt) - Date.now()).toBeLessThanOrEqual(config.streamTokenTtlMs);

      const stream = await SseClient.open(`${base}/v1/turns/${turnId}/events?token=${token}`);
      await stream.waitFor((event) => event.type === 'checkpoint.requested');
      stream.close();
      // A read-only token follows the turn but may not act on it.
      const reader = await WsClient.open(`${base.replace('http', 'ws')}/v1/turns/${turnId}/ws?token=${token}`);
      await reader.waitForEvent((event) => event.type === 'checkpoint.requested');
      reader.send({ type: 'checkpoint', requestId: 'read-only', checkpointId: 'cp-1', action: 'cancel' });
      reader.send({ type: 'cancel', requestId: 'read-only-cancel' });
      expect(await reader.waitForReply('read-only')).toMatchObject({
        type: 'error',
        status: 403,
        error: { code: 'forbidden' },
      });
      expect(await reader.waitForReply('read-only-cancel')).toMatchObject({
        type: 'error',
        status: 403,
        error: { code: 'forbidden' },
      });
      reader.close();
      expect((await api.turn(turnId)).body).toMatchObject({ status: 'waiting', pendingCheckpoint: { id: 'cp-1' } });

      const writer = (await as(aliceKey, 'POST', '/v1/stream-tokens', { turnId, scope: 'write' })).json();
      expect(writer.scope).toBe('write');
      const socket = await WsClient.open(`${base.replace('http', 'ws')}/v1/turns/${turnId}/ws?token=${writer.token}`);
      await socket.waitForEvent((event) => event.type === 'checkpoint.requested');
      fake.enqueue({ content: [text('answered through a token socket')] });
      socket.send({ type: 'checkpoint', requestId: 1, checkpointId: 'cp-1', action: 'approve' });
      expect(await socket.waitForReply(1)).toMatchObject({ type: 'ack', by: 'alice' });
      await socket.closed;

      expect(errorOf(await as(null, 'GET', `/v1/turns/${turnId}?token=${token}`))).toEqual([401, 'unauthorized']);
      const tampered = token.replace(/.$/, (c: string) => (c === 'A' ? 'B' : 'A'));
      expect(errorOf(await as(null, 'GET', `/v1/turns/${turnId}/events?token=${tampered}`))).toEqual([
        401,
        'invalid_token',
      ]);
      expect(errorOf(await as(null, 'GET', `/v1/turns/${turnId}/events?token=garbage`))).toEqual([
        401,
        'invalid_token',
      ]);
      const otherTurn = (await aliceWaiting('other_turn')).turnId;
      expect(errorOf(await as(null, 'GET', `/v1/turns/${otherTurn}/events?token=${token}`))).toEqual([
        401,
        'invalid_token',
      ]);
      await expect(
        WsClient.open(`${base.replace('http', 'ws')}/v1/turns/${otherTurn}/ws?token=${token}`),
      ).rejects.toMatchObject({ status: 401 });
      await finish(otherTurn);
    });

    it('expire: a token gets the TTL, and one past it is refused with token_expired', async () => {
      fake.enqueue({ content: [text('short lived')] });
      const turnId = await api.startTurn('expiry');
      await api.finished(turnId);
      const before = Date.now();
      const issued = (await as(aliceKey, 'POST', '/v1/stream-tokens', { turnId })).json();
      const ttl = Date.parse(issued.expiresAt) - before;
      expect(ttl).toBeGreaterThanOrEqual(config.streamTokenTtlMs);
      expect(ttl).toBeLessThanOrEqual(config.streamTokenTtlMs + (Date.now() - before));
      expect((await as(null, 'GET', `/v1/turns/${turnId}/events?token=${issued.token}`)).statusCode).toBe(200);
      // A token of this API's secret that the clock has passed, as the one above will be (no waiting for it).
      const issuedEarlier = new StreamTokens(secret, config.streamTokenTtlMs, () => before - config.streamTokenTtlMs);
      const { token } = issuedEarlier.issue({ id: 'alice', operator: false }, turnId);
      const expired = await as(null, 'GET', `/v1/turns/${turnId}/events?token=${token}`);
      expect(errorOf(expired)).toEqual([401, 'token_expired']);
      await expect(
        WsClient.open(`${base.replace('http', 'ws')}/v1/turns/${turnId}/ws?token=${token}`),
      ).rejects.toMatchObject({ status: 401 });
    });

    it('a WebSocket opened with a token closes when the token expires, even while the turn goes on', async () => {
      const { app: shortLived } = await buildTestApp(env.client, taskQueue, { SKILLFLOW_STREAM_TOKEN_TTL_MS: '1500' });
      others.push(shortLived);
      await shortLived.listen({ port: 0, host: '127.0.0.1' });
      const shortBase = `ws://127.0.0.1:${(shortLived.server.address() as AddressInfo).port}`;
      const { turnId } = await aliceWaiting('outlives_its_token');
      const { token } = (
        await shortLived.inject({
          method: 'POST',
          url: '/v1/stream-tokens',
          headers: authHeaders(aliceKey),
          payload: { turnId, scope: 'write' },
        })
      ).json();
      const socket = await WsClient.open(`${shortBase}/v1/turns/${turnId}/ws?token=${token}`);
      await socket.waitForEvent((event) => event.type === 'checkpoint.requested');
      expect(await socket.closed).toEqual({ code: 1008, reason: 'stream token expired' });
      expect((await api.turn(turnId)).body.status).toBe('waiting');
      await finish(turnId);
    });

    it("are signed by the API's secret: another API process with another secret refuses them", async () => {
      fake.enqueue({ content: [text('signed')] });
      const turnId = await api.startTurn('secret');
      await api.finished(turnId);
      const { token } = (await as(aliceKey, 'POST', '/v1/stream-tokens', { turnId })).json();
      const { app: stranger } = await buildTestApp(
        env.client,
        taskQueue,
        {},
        { streamTokenSecret: Buffer.from('another secret, of at least thirty-two bytes') },
      );
      others.push(stranger);
      expect(
        errorOf(await stranger.inject({ method: 'GET', url: `/v1/turns/${turnId}/events?token=${token}` })),
      ).toEqual([401, 'invalid_token']);
    });
  });

  describe('without SKILLFLOW_API_KEYS', () => {
    it('generates a key on first start, keeps it in the data dir (0600), prints it once, then its fingerprint', () => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-auth-'));
      const printed: string[] = [];
      const keys = resolveApiKeys(loadConfig({ SKILLFLOW_DATA_DIR: dataDir }), (line) => printed.push(line));
      expect(keys).toEqual([
        { key: expect.stringMatching(/^sk-sf-[A-Za-z0-9_-]{43}$/), user: 'local', operator: true },
      ]);
      const file = path.join(dataDir, 'api-key');
      expect(fs.readFileSync(file, 'utf8').trim()).toBe(keys[0].key);
      expect((fs.statSync(file).mode & 0o777).toString(8)).toBe('600');
      expect(printed).toHaveLength(1);
      expect(printed[0]).toContain(keys[0].key);
      const later: string[] = [];
      expect(resolveApiKeys(loadConfig({ SKILLFLOW_DATA_DIR: dataDir }), (line) => later.push(line))).toEqual(keys);
      expect(later).toEqual([`API key: the one kept in ${file} (fingerprint ${fingerprint(keys[0].key)})`]);
      expect(later.join('')).not.toContain(keys[0].key);
    });

    it('SKILLFLOW_AUTH=off is the explicit opt-out: no key needed, everyone is the local operator', async () => {
      const { app: open } = await buildTestApp(env.client, taskQueue, {
        SKILLFLOW_AUTH: 'off',
        SKILLFLOW_API_KEYS: '',
      });
      others.push(open);
      fake.enqueue({ content: [text('open house')] });
      const created = await open.inject({ method: 'POST', url: '/v1/sessions' });
      expect(created.statusCode).toBe(201);
      const sessionId = created.json().id;
      const turn = await open.inject({
        method: 'POST',
        url: `/v1/sessions/${sessionId}/turns?wait=true`,
        payload: { message: 'hi' },
      });
      expect(turn.json()).toMatchObject({ status: 'completed', output: 'open house' });
      expect((await open.inject({ method: 'GET', url: `/v1/sessions/${sessionId}` })).json().userId).toBe('local');
      expect((await as(aliceKey, 'GET', `/v1/sessions/${sessionId}`)).statusCode).toBe(404);
    });
  });
});
