import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance, InjectOptions } from 'fastify';
import Redis from 'ioredis';
import { turnEventsQuery } from '../workflows/definitions';
import { aliceKey, authHeaders, bobKey, buildTestApp, operatorKey } from './support/api';
import { text, toolUse, type FakeAnthropic } from './support/fake-anthropic';
import { useWorkerHarness } from './support/harness';
import { ApiDriver } from './support/scenario';
import { requireRedis, testRedisUrl, uniqueRedisPrefix } from './support/services';
import { SseClient, WsClient } from './support/stream-clients';
import type { TemporalTestEnv } from './support/temporal';

const ask = (checkpoint: string, kind: 'approval' | 'question' = 'approval') =>
  toolUse('request_human_approval', { checkpoint, summary: `Decide ${checkpoint}`, kind });

type Response = { statusCode: number; json(): { error?: { code: string; message: string } } & Record<string, unknown> };
const errorOf = (response: Response) => [response.statusCode, response.json().error?.code];

/** Answer links: who makes them, what they let their holder do, and when they stop working. */
describe('API answer links', () => {
  const harness = useWorkerHarness('links');
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let app: FastifyInstance;
  let api: ApiDriver;
  let clock = Date.now();
  const secret = randomBytes(32);
  const closers: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    ({ env, fake } = harness);
    ({ app } = await buildTestApp(env.client, harness.taskQueue, {}, { streamTokenSecret: secret, now: () => clock }));
    api = new ApiDriver(app);
  });
  harness.closeFirst(async () => {
    for (const close of closers) await close();
    await app?.close();
  });

  const call = (
    target: FastifyInstance,
    bearer: string | null,
    method: InjectOptions['method'],
    url: string,
    payload?: object,
  ) => target.inject({ method, url, headers: bearer ? authHeaders(bearer) : {}, ...(payload ? { payload } : {}) });
  const as = (bearer: string | null, method: InjectOptions['method'], url: string, payload?: object) =>
    call(app, bearer, method, url, payload);

  async function makeLink(sessionId: string, body: object = {}, key = aliceKey, target = app) {
    const response = await call(target, key, 'POST', `/v1/sessions/${sessionId}/links`, body);
    expect(response.statusCode).toBe(201);
    return response.json() as { id: string; url: string; expiresAt: string; scope: Record<string, unknown> };
  }
  const tokenOf = (url: string) => new URL(url).hash.replace(/^#link=/, '');
  async function exchange(url: string, target = app): Promise<string> {
    const response = await call(target, null, 'POST', '/v1/links/exchange', { token: tokenOf(url) });
    expect(response.statusCode).toBe(201);
    return response.json().token;
  }

  async function waitingTurn(name: string, kind: 'approval' | 'question' = 'approval') {
    fake.enqueue({ content: [ask(name, kind)] });
    const sessionId = await api.createSession(aliceKey);
    const turnId = (await api.sendMessage(sessionId, { message: 'an exam' }, aliceKey)).body.id as string;
    await api.pending(turnId);
    return { sessionId, turnId };
  }

  it('lets its holder follow the session and answer the checkpoints its pattern names, and nothing else', async () => {
    const { sessionId, turnId } = await waitingTurn('exam_params');
    const link = await makeLink(sessionId, { checkpoints: 'question*' });
    expect(link).toMatchObject({
      id: expect.stringMatching(/^lnk_/),
      url: expect.stringMatching(/^http:\/\/localhost(:\d+)?\/app\/#link=sfl1_[A-Za-z0-9_-]{43}$/),
      scope: { sessionId, checkpoints: 'question*', messages: false },
      createdBy: 'alice',
      revokedAt: null,
    });
    const access = await exchange(link.url);
    expect((await as(access, 'GET', `/v1/sessions/${sessionId}`)).json()).toMatchObject({ id: sessionId });
    expect((await as(access, 'GET', `/v1/turns/${turnId}`)).json()).toMatchObject({
      status: 'waiting',
      pendingCheckpoint: { id: 'cp-1', name: 'exam_params' },
    });
    expect((await as(access, 'GET', `/v1/turns/${turnId}/log`)).statusCode).toBe(200);
    expect((await as(access, 'GET', '/v1/links/current')).json()).toEqual({
      id: link.id,
      sessionId,
      checkpoints: 'question*',
      messages: false,
      expiresAt: link.expiresAt,
    });

    // A checkpoint outside the pattern stays for the owner; messages and every other route are refused, with why.
    const outside = await as(access, 'POST', `/v1/turns/${turnId}/checkpoints/cp-1`, { action: 'approve' });
    expect(errorOf(outside)).toEqual([403, 'link_checkpoint_not_allowed']);
    expect(outside.json().error.message).toContain('question*');
    expect((await api.turn(turnId)).body).toMatchObject({ status: 'waiting', pendingCheckpoint: { id: 'cp-1' } });
    expect(errorOf(await as(access, 'POST', `/v1/sessions/${sessionId}/turns`, { message: 'hi' }))).toEqual([
      403,
      'link_messages_not_allowed',
    ]);
    for (const [method, url] of [
      ['POST', `/v1/turns/${turnId}/cancel`],
      ['DELETE', `/v1/sessions/${sessionId}`],
      ['POST', `/v1/sessions/${sessionId}/links`],
      ['GET', `/v1/sessions/${sessionId}/links`],
      ['GET', '/v1/sessions'],
      ['POST', '/v1/sessions'],
      ['GET', '/v1/turns'],
      ['GET', '/v1/skills'],
    ] as const) {
      expect({ route: `${method} ${url}`, error: errorOf(await as(access, method, url)) }).toEqual({
        route: `${method} ${url}`,
        error: [403, 'link_route_not_allowed'],
      });
    }
    const other = await api.createSession(aliceKey);
    expect(errorOf(await as(access, 'GET', `/v1/sessions/${other}`))).toEqual([403, 'link_wrong_session']);
    expect(errorOf(await as(access, 'GET', `/v1/turns/turn-${other}-1`))).toEqual([403, 'link_wrong_session']);
    expect(errorOf(await as(access, 'POST', '/v1/stream-tokens', { turnId: `turn-${other}-1` }))).toEqual([
      403,
      'link_wrong_session',
    ]);
    expect(
      errorOf(
        await as(access, 'POST', `/v1/turns/turn-${other}-1/checkpoints/cp-1`, { action: 'answer', answer: 'x' }),
      ),
    ).toEqual([403, 'link_wrong_session']);

    // The owner approves; the next checkpoint is within the pattern and the link answers it.
    fake.enqueue({ content: [ask('question_1', 'question')] });
    expect((await api.answer(turnId, 'cp-1', { action: 'approve' }, aliceKey)).code).toBe(200);
    await api.pending(turnId, 'cp-1');
    expect(
      errorOf(await as(access, 'POST', `/v1/turns/${turnId}/checkpoints/cp-3`, { action: 'answer', answer: 'x' })),
    ).toEqual([409, 'checkpoint_not_pending']);
    fake.enqueue({ content: [text('Thank you.')] });
    const answered = await as(access, 'POST', `/v1/turns/${turnId}/checkpoints/cp-2`, {
      action: 'answer',
      answer: '42',
    });
    expect([answered.statusCode, answered.json()]).toEqual([
      200,
      { checkpointId: 'cp-2', action: 'answer', by: `link:${link.id}` },
    ]);
    expect(await api.finished(turnId)).toMatchObject({ status: 'completed' });
    const events = await env.client.workflow.getHandle(turnId).query(turnEventsQuery, 0);
    expect(events.filter((event) => event.type === 'checkpoint.resolved').map((event) => event.by)).toEqual([
      'alice',
      `link:${link.id}`,
    ]);

    // A stream token taken through the link follows the turn's events.
    const streamToken = (await as(access, 'POST', '/v1/stream-tokens', { turnId })).json().token as string;
    const stream = await as(null, 'GET', `/v1/turns/${turnId}/events?token=${streamToken}`);
    expect(stream.statusCode).toBe(200);
    expect(stream.body).toContain('"type":"done"');
  });

  it('sends messages only when it says so', async () => {
    const sessionId = await api.createSession(aliceKey);
    const access = await exchange((await makeLink(sessionId, { messages: true })).url);
    fake.enqueue({ content: [text('Hello from the link.')] });
    const started = await as(access, 'POST', `/v1/sessions/${sessionId}/turns`, { message: 'hello' });
    expect(started.statusCode).toBe(202);
    expect(await api.finished(started.json().id)).toMatchObject({ output: 'Hello from the link.' });
  });

  it("is made, listed and revoked by the session's user or an operator only", async () => {
    const sessionId = await api.createSession(aliceKey);
    expect(errorOf(await as(bobKey, 'POST', `/v1/sessions/${sessionId}/links`, {}))).toEqual([404, 'not_found']);
    const mine = await makeLink(sessionId, { expiresInSeconds: 3600 });
    clock += 1;
    const operators = await makeLink(sessionId, { messages: true }, operatorKey);
    expect(operators).toMatchObject({ createdBy: 'ops', scope: { messages: true, checkpoints: null } });
    const listed = (await as(aliceKey, 'GET', `/v1/sessions/${sessionId}/links`)).json().links;
    expect(listed.map((link: { id: string }) => link.id)).toEqual([operators.id, mine.id]);
    expect(JSON.stringify(listed)).not.toContain('sfl1_');
    expect(errorOf(await as(bobKey, 'GET', `/v1/sessions/${sessionId}/links`))).toEqual([404, 'not_found']);
    expect(errorOf(await as(bobKey, 'DELETE', `/v1/sessions/${sessionId}/links/${mine.id}`))).toEqual([
      404,
      'not_found',
    ]);
    expect((await as(operatorKey, 'DELETE', `/v1/sessions/${sessionId}/links/${mine.id}`)).statusCode).toBe(204);
    const after = (await as(aliceKey, 'GET', `/v1/sessions/${sessionId}/links`)).json().links;
    expect(after.find((link: { id: string }) => link.id === mine.id).revokedAt).toEqual(expect.any(String));
    const unknown = `lnk_${'a'.repeat(22)}`;
    expect(errorOf(await as(aliceKey, 'DELETE', `/v1/sessions/${sessionId}/links/${unknown}`))).toEqual([
      404,
      'not_found',
    ]);

    expect(
      errorOf(await as(aliceKey, 'POST', `/v1/sessions/${sessionId}/links`, { checkpoints: 'Question[1]' })),
    ).toEqual([400, 'invalid_request']);
    expect(errorOf(await as(aliceKey, 'POST', `/v1/sessions/${sessionId}/links`, { expiresInSeconds: 5 }))).toEqual([
      400,
      'invalid_request',
    ]);
    expect(errorOf(await as(aliceKey, 'POST', `/v1/sessions/${sessionId}/links`, { scope: 'all' }))).toEqual([
      400,
      'invalid_request',
    ]);
  });

  it('is refused once revoked: the link, its access tokens and the stream tokens taken with them', async () => {
    fake.enqueue({ content: [text('done')] });
    const sessionId = await api.createSession(aliceKey);
    const turnId = (await api.sendMessage(sessionId, { message: 'hi' }, aliceKey)).body.id as string;
    await api.finished(turnId);
    const link = await makeLink(sessionId);
    const access = await exchange(link.url);
    const streamToken = (await as(access, 'POST', '/v1/stream-tokens', { turnId })).json().token as string;
    expect((await as(aliceKey, 'DELETE', `/v1/sessions/${sessionId}/links/${link.id}`)).statusCode).toBe(204);

    expect(errorOf(await as(access, 'GET', `/v1/sessions/${sessionId}`))).toEqual([401, 'link_revoked']);
    expect(errorOf(await as(null, 'POST', '/v1/links/exchange', { token: tokenOf(link.url) }))).toEqual([
      401,
      'link_revoked',
    ]);
    expect(errorOf(await as(null, 'GET', `/v1/turns/${turnId}/events?token=${streamToken}`))).toEqual([
      401,
      'link_revoked',
    ]);
  });

  it('is refused once expired (the clock moved, no waiting), and so is an access token past its own expiry', async () => {
    const sessionId = await api.createSession(aliceKey);
    const short = await makeLink(sessionId, { expiresInSeconds: 60 });
    const long = await makeLink(sessionId);
    const shortAccess = await exchange(short.url);
    const longAccess = await exchange(long.url);
    clock += 61_000;
    expect(errorOf(await as(shortAccess, 'GET', `/v1/sessions/${sessionId}`))).toEqual([401, 'token_expired']);
    expect(errorOf(await as(null, 'POST', '/v1/links/exchange', { token: tokenOf(short.url) }))).toEqual([
      401,
      'link_expired',
    ]);
    expect((await as(longAccess, 'GET', `/v1/sessions/${sessionId}`)).statusCode).toBe(200);
    clock += 15 * 60_000;
    expect(errorOf(await as(longAccess, 'GET', `/v1/sessions/${sessionId}`))).toEqual([401, 'token_expired']);
    const again = await exchange(long.url);
    expect((await as(again, 'GET', `/v1/sessions/${sessionId}`)).statusCode).toBe(200);
    expect(
      (await as(aliceKey, 'GET', `/v1/sessions/${sessionId}/links`)).json().links.map((l: { id: string }) => l.id),
    ).toEqual([long.id]);
  });

  it('refuses unknown links and forged access tokens with 401', async () => {
    for (const token of ['sfl1_' + 'x'.repeat(43), 'not-a-link'])
      expect(errorOf(await as(null, 'POST', '/v1/links/exchange', { token }))).toEqual([401, 'link_unknown']);
    const forged = `sfa1.${Buffer.from(JSON.stringify({ k: 'lnk_x', e: clock + 60_000 })).toString('base64url')}.forged`;
    expect(errorOf(await as(forged, 'GET', '/v1/links/current'))).toEqual([401, 'invalid_token']);
    expect(errorOf(await as(aliceKey, 'GET', '/v1/links/current'))).toEqual([404, 'not_found']);
  });

  it('a revocation on one API process holds on another sharing its Redis', async () => {
    await requireRedis();
    const prefix = uniqueRedisPrefix('links');
    const redis = new Redis(testRedisUrl());
    closers.push(async () => {
      const left = await redis.keys(`${prefix}*`);
      if (left.length > 0) await redis.del(...left);
      await redis.quit();
    });
    const env2 = { SKILLFLOW_REDIS_URL: testRedisUrl(), SKILLFLOW_REDIS_PREFIX: prefix };
    const [one, two] = await Promise.all(
      [1, 2].map(
        async () => (await buildTestApp(env.client, harness.taskQueue, env2, { streamTokenSecret: secret })).app,
      ),
    );
    closers.push(
      () => one.close(),
      () => two.close(),
    );
    const sessionId = await api.createSession(aliceKey);
    const link = await makeLink(sessionId, {}, aliceKey, one);
    const access = await exchange(link.url, two);
    expect((await call(one, access, 'GET', `/v1/sessions/${sessionId}`)).statusCode).toBe(200);
    expect((await call(two, aliceKey, 'DELETE', `/v1/sessions/${sessionId}/links/${link.id}`)).statusCode).toBe(204);
    for (const target of [one, two]) {
      expect(errorOf(await call(target, access, 'GET', `/v1/sessions/${sessionId}`))).toEqual([401, 'link_revoked']);
      expect(errorOf(await call(target, null, 'POST', '/v1/links/exchange', { token: tokenOf(link.url) }))).toEqual([
        401,
        'link_revoked',
      ]);
    }
    const keys = await redis.keys(`${prefix}link*`);
    const stored = (
      await Promise.all(keys.map((key) => redis.type(key).then((type) => (type === 'string' ? redis.get(key) : ''))))
    ).join('\n');
    expect(stored).not.toContain(tokenOf(link.url));
  });

  /** `promise`, or an error naming `what` after 10 s (the test's own timeout would name nothing). */
  async function within<T>(promise: Promise<T>, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not happen within 10 s`)), 10_000);
    });
    try {
      return await Promise.race([promise, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  async function listening(target: FastifyInstance): Promise<string> {
    await target.listen({ port: 0, host: '127.0.0.1' });
    return `127.0.0.1:${(target.server.address() as AddressInfo).port}`;
  }

  it('a revocation cuts the streams and sockets open through the link on every API process sharing Redis, no other', async () => {
    await requireRedis();
    const prefix = uniqueRedisPrefix('links-cut');
    const redis = new Redis(testRedisUrl());
    closers.push(async () => {
      const left = await redis.keys(`${prefix}*`);
      if (left.length > 0) await redis.del(...left);
      await redis.quit();
    });
    const env2 = { SKILLFLOW_REDIS_URL: testRedisUrl(), SKILLFLOW_REDIS_PREFIX: prefix };
    // No periodic reading of the links within the test: only the revocation's notice can cut the streams.
    const options = { streamTokenSecret: secret, linkRecheckMs: 3_600_000 };
    const [one, two] = await Promise.all(
      [1, 2].map(async () => (await buildTestApp(env.client, harness.taskQueue, env2, options)).app),
    );
    closers.push(
      () => one.close(),
      () => two.close(),
    );
    const [hostOne, hostTwo] = [await listening(one), await listening(two)];
    const { sessionId, turnId } = await waitingTurn('exam_params');
    const link = await makeLink(sessionId, {}, aliceKey, one);
    const access = await exchange(link.url, one);
    const byLink = { authorization: `Bearer ${access}` };
    const sseOne = await SseClient.open(`http://${hostOne}/v1/turns/${turnId}/events`, byLink);
    const sseTwo = await SseClient.open(`http://${hostTwo}/v1/turns/${turnId}/events`, byLink);
    const streamToken = (await call(two, access, 'POST', '/v1/stream-tokens', { turnId, scope: 'write' })).json()
      .token as string;
    const socket = await WsClient.open(`ws://${hostTwo}/v1/turns/${turnId}/ws?token=${streamToken}`);
    const owners = await SseClient.open(`http://${hostOne}/v1/turns/${turnId}/events`, authHeaders(aliceKey));
    for (const stream of [sseOne, sseTwo, owners])
      await stream.waitFor((event) => event.type === 'checkpoint.requested');
    await socket.waitForEvent((event) => event.type === 'checkpoint.requested');

    expect((await call(one, aliceKey, 'DELETE', `/v1/sessions/${sessionId}/links/${link.id}`)).statusCode).toBe(204);
    await within(sseOne.ended, "the link's SSE stream on the process that revoked it ending");
    await within(sseTwo.ended, "the link's SSE stream on the other process ending");
    expect(await within(socket.closed, "the link's socket on the other process closing")).toEqual({
      code: 1008,
      reason: 'link_revoked',
    });
    expect([sseOne.comments, sseTwo.comments]).toEqual([
      expect.arrayContaining(['link_revoked']),
      expect.arrayContaining(['link_revoked']),
    ]);

    // The owner's stream of the same turn goes on to the turn's end.
    fake.enqueue({ content: [text('Done.')] });
    expect((await api.answer(turnId, 'cp-1', { action: 'approve' }, aliceKey)).code).toBe(200);
    await within(
      owners.waitFor((event) => event.type === 'done'),
      "the owner's stream reaching the turn's end",
    );
  });

  it('a stream open through a link ends when a reading of the link finds it expired or revoked (one process, no Redis)', async () => {
    let now = Date.now();
    const { app: single } = await buildTestApp(
      env.client,
      harness.taskQueue,
      {},
      { streamTokenSecret: secret, now: () => now, linkRecheckMs: 100 },
    );
    closers.push(() => single.close());
    const host = await listening(single);
    const { sessionId, turnId } = await waitingTurn('exam_params');
    const short = await makeLink(sessionId, { expiresInSeconds: 60 }, aliceKey, single);
    const revoked = await makeLink(sessionId, {}, aliceKey, single);
    const open = async (link: { url: string }) => {
      const access = await exchange(link.url, single);
      const stream = await SseClient.open(`http://${host}/v1/turns/${turnId}/events`, {
        authorization: `Bearer ${access}`,
      });
      await stream.waitFor((event) => event.type === 'checkpoint.requested');
      return stream;
    };
    const [expiring, revoking] = [await open(short), await open(revoked)];

    expect((await call(single, aliceKey, 'DELETE', `/v1/sessions/${sessionId}/links/${revoked.id}`)).statusCode).toBe(
      204,
    );
    await within(revoking.ended, "the revoked link's stream ending");
    expect(revoking.comments).toContain('link_revoked');
    now += 61_000;
    await within(expiring.ended, "the expired link's stream ending");
    expect(expiring.comments).toContain('link_expired');
    await env.client.workflow.getHandle(turnId).cancel();
  });

  it('limits its holder with auth off too', async () => {
    const { app: open } = await buildTestApp(env.client, harness.taskQueue, { SKILLFLOW_AUTH: 'off' });
    closers.push(() => open.close());
    const sessionId = await new ApiDriver(open).createSession();
    const access = await exchange((await makeLink(sessionId, {}, 'unused', open)).url, open);
    expect((await call(open, access, 'GET', `/v1/sessions/${sessionId}`)).statusCode).toBe(200);
    expect(errorOf(await call(open, access, 'GET', '/v1/skills'))).toEqual([403, 'link_route_not_allowed']);
  });
});
