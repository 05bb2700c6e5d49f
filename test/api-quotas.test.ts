import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import type { FastifyInstance } from 'fastify';
import Redis from 'ioredis';
import { authHeaders, buildTestApp, eventually } from './support/api';
import { text, toolUse } from './support/fake-anthropic';
import { useWorkerHarness } from './support/harness';
import { ApiDriver } from './support/scenario';
import { requireRedis, testRedisUrl, uniqueRedisPrefix } from './support/services';
import { workflowTypes } from '../workflows/definitions';

/** Keys of users of this file only, so no other test's sessions count against their quotas. */
const users = ['carol', 'dave', 'erin', 'frank', 'grace', 'heidi', 'ivan', 'judy', 'kim'] as const;
const keyOf = (user: string) => `${user}-key-0123456789abcdef`;
const keys = users.map((user) => `${keyOf(user)}=${user}`).join(',');

/** Issue 13.13: sessions per user, model tokens per user per day, and idle sessions closed and removed. */
describe('quotas', () => {
  const harness = useWorkerHarness('quotas');

  async function appWith(env: Record<string, string>, client: Client = harness.env.client) {
    const { app } = await buildTestApp(client, harness.taskQueue, { SKILLFLOW_API_KEYS: keys, ...env });
    harness.closeFirst(() => app.close());
    return app;
  }

  const createSession = (app: FastifyInstance, user: string, headers: Record<string, string> = {}) =>
    app.inject({ method: 'POST', url: '/v1/sessions', headers: { ...authHeaders(keyOf(user)), ...headers } });

  describe('sessions per user', () => {
    it('the session beyond SKILLFLOW_MAX_SESSIONS_PER_USER is a 429 until one is deleted; other users are not affected', async () => {
      const app = await appWith({ SKILLFLOW_MAX_SESSIONS_PER_USER: '2' });
      const first = await createSession(app, 'carol');
      expect((await createSession(app, 'carol')).statusCode).toBe(201);
      const refused = await createSession(app, 'carol');
      expect([refused.statusCode, refused.json().error.code]).toEqual([429, 'too_many_sessions']);
      expect(refused.json().error.message).toBe(
        'carol has 2 open sessions; the limit is 2. Delete one (DELETE /v1/sessions/{id}) first.',
      );
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect((await createSession(app, 'dave')).statusCode).toBe(201);

      const deleted = await app.inject({
        method: 'DELETE',
        url: `/v1/sessions/${first.json().id}`,
        headers: authHeaders(keyOf('carol')),
      });
      expect(deleted.statusCode).toBe(204);
      expect((await createSession(app, 'carol')).statusCode).toBe(201);
    });

    // Issue 24.9: visibility drops a deleted session in the background; a count read before it did still lists it.
    it.each([
      ['another API process sharing Redis', 'judy', true],
      ['the same API process, without Redis', 'kim', false],
    ])(
      'a session deleted at the limit frees its place at once, on %s, while visibility still lists it',
      async (_where, user, shared) => {
        const prefix = uniqueRedisPrefix('deleted-sessions');
        const env = {
          SKILLFLOW_MAX_SESSIONS_PER_USER: '1',
          ...(shared ? { SKILLFLOW_REDIS_URL: testRedisUrl(), SKILLFLOW_REDIS_PREFIX: prefix } : {}),
        };
        const counts = heldSessionCounts(harness.env.client, user);
        const deleting = await appWith(env, counts.client);
        const creating = shared ? await appWith(env, counts.client) : deleting;
        const first = (await createSession(deleting, user)).json().id as string;
        // Visibility lists it (so the count read below, taken before the delete, does).
        await eventually(
          () => openSessions(user),
          (ids) => ids.includes(first),
        );

        counts.hold();
        const created = createSession(creating, user);
        await counts.listed;
        expect(
          (await deleting.inject({ method: 'DELETE', url: `/v1/sessions/${first}`, headers: authHeaders(keyOf(user)) }))
            .statusCode,
        ).toBe(204);
        counts.release();
        expect((await created).statusCode).toBe(201);
        if (shared) await removeKeys(prefix);
      },
    );

    it('an idempotent retry of a session that exists is not a new session, even at the limit', async () => {
      const app = await appWith({ SKILLFLOW_MAX_SESSIONS_PER_USER: '1' });
      const first = await createSession(app, 'erin', { 'idempotency-key': 'erin-first-session' });
      expect(first.statusCode).toBe(201);
      const retry = await createSession(app, 'erin', { 'idempotency-key': 'erin-first-session' });
      expect([retry.statusCode, retry.json().id]).toEqual([201, first.json().id]);
      expect((await createSession(app, 'erin')).statusCode).toBe(429);
    });

    it('two API processes sharing Redis never let requests at the same moment pass the limit together', async () => {
      await requireRedis();
      const prefix = uniqueRedisPrefix('hardening-quotas');
      const env = {
        SKILLFLOW_MAX_SESSIONS_PER_USER: '3',
        SKILLFLOW_REDIS_URL: testRedisUrl(),
        SKILLFLOW_REDIS_PREFIX: prefix,
      };
      const [one, two] = [await appWith(env), await appWith(env)];
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => createSession(i % 2 === 0 ? one : two, 'frank')),
      );
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 201, 201, 429, 429, 429, 429, 429]);
      await removeKeys(prefix);
    });
  });

  async function removeKeys(prefix: string) {
    const redis = new Redis(testRedisUrl());
    try {
      const left = await redis.keys(`${prefix}*`);
      if (left.length > 0) await redis.del(...left);
    } finally {
      await redis.quit();
    }
  }

  /** The user's sessions visibility lists as running. */
  async function openSessions(user: string): Promise<string[]> {
    const listed = await harness.env.client.workflowService.listWorkflowExecutions({
      namespace: harness.env.client.options.namespace,
      query: `WorkflowType = '${workflowTypes.session}' AND ExecutionStatus = 'Running' AND SkillflowUser = '${user}'`,
    });
    return (listed.executions ?? []).map(
      (execution) => execution.execution?.workflowId?.slice('session-'.length) ?? '',
    );
  }

  describe('model tokens per user per day', () => {
    it("once a user's turns of today used the budget, the next turn is a 429 until midnight UTC, deleting sessions or not", async () => {
      const app = await appWith({ SKILLFLOW_USER_DAILY_TOKENS: '1000' });
      const api = new ApiDriver(app);
      harness.fake.enqueue({
        content: [text('an expensive answer')],
        usage: { input_tokens: 900, output_tokens: 150 },
      });
      const sessionId = await api.createSession(keyOf('grace'));
      const turnId = (await api.sendMessage(sessionId, { message: 'spend' }, keyOf('grace'))).body.id;
      expect(await api.finished(turnId, undefined, keyOf('grace'))).toMatchObject({
        status: 'completed',
        usage: { inputTokens: 900, outputTokens: 150 },
      });

      const refused = await api.sendMessage(sessionId, { message: 'more please' }, keyOf('grace'));
      expect(refused.code).toBe(429);
      expect(refused.body.error.code).toBe('token_budget_exhausted');
      expect(refused.body.error.message).toMatch(
        /^grace has used 1,050 of 1,000 model tokens today \(UTC\); the budget renews at 00:00 UTC, in /,
      );

      // Deleting the session that spent them does not give them back.
      expect(
        (await app.inject({ method: 'DELETE', url: `/v1/sessions/${sessionId}`, headers: authHeaders(keyOf('grace')) }))
          .statusCode,
      ).toBe(204);
      const fresh = await api.createSession(keyOf('grace'));
      expect((await api.sendMessage(fresh, { message: 'and now?' }, keyOf('grace'))).code).toBe(429);

      // Another API process, and another user, see the same ledger.
      const other = await appWith({ SKILLFLOW_USER_DAILY_TOKENS: '1000' });
      expect((await new ApiDriver(other).sendMessage(fresh, { message: 'elsewhere?' }, keyOf('grace'))).code).toBe(429);
      harness.fake.enqueue({ content: [text('cheap')] });
      const heidi = await new ApiDriver(other).startTurn('hello', {}, keyOf('heidi'));
      await new ApiDriver(other).finished(heidi, undefined, keyOf('heidi'));
    });
  });

  describe('model tokens per user per day, during a turn', () => {
    it('a turn that uses up what was left of the budget fails with reason token_budget before its next model call', async () => {
      const app = await appWith({ SKILLFLOW_USER_DAILY_TOKENS: '1000' });
      const api = new ApiDriver(app);
      // One round: 1,050 tokens and a tool call. The model is not called again (nothing more is scripted).
      harness.fake.enqueue({
        content: [text('Let me look.'), toolUse('list_skills', {})],
        usage: { input_tokens: 900, output_tokens: 150 },
      });
      const turnId = await api.startTurn('spend it all', {}, keyOf('ivan'));
      const turn = await api.finished(turnId, undefined, keyOf('ivan'));
      expect(turn).toMatchObject({
        status: 'failed',
        reason: 'token_budget',
        error: { code: 'token_budget' },
        usage: { inputTokens: 900, outputTokens: 150 },
      });
      expect(turn.error.message).toMatch(
        /^The turn used 1,050 model tokens, reaching the 1,000 left of the user's daily budget when it started/,
      );
      expect(harness.fake.requests).toHaveLength(1);
      // And the next turn is refused before it starts.
      expect(await api.startTurn('more', {}, keyOf('ivan')).catch((err: Error) => err.message)).toMatch(
        /^start turn: 429 .*token_budget_exhausted/,
      );
    });
  });

  describe('idle sessions', () => {
    it('a session unused for SKILLFLOW_SESSION_IDLE_MS is closed and removed; one whose turn still runs is kept', async () => {
      const app = await appWith({ SKILLFLOW_SESSION_IDLE_MS: '3000' });
      const api = new ApiDriver(app);
      harness.fake.enqueue({ content: [text('short')] });
      const idle = await api.createSession(keyOf('carol'));
      const done = (await api.sendMessage(idle, { message: 'hello' }, keyOf('carol'))).body.id;
      await api.finished(done, undefined, keyOf('carol'));

      // A turn that takes longer than the idle time: its session is in use all along.
      harness.fake.enqueue({ content: [text('slow '), text('answer')], delayMs: 700 });
      const busy = await api.createSession(keyOf('dave'));
      const slow = (await api.sendMessage(busy, { message: 'take your time' }, keyOf('dave'))).body.id;

      const gone = await eventually(
        () => app.inject({ method: 'GET', url: `/v1/sessions/${idle}`, headers: authHeaders(keyOf('carol')) }),
        (response) => response.statusCode === 404,
        30_000,
      );
      expect(gone.json().error.code).toBe('not_found');
      expect(
        (await app.inject({ method: 'GET', url: `/v1/turns/${done}`, headers: authHeaders(keyOf('carol')) }))
          .statusCode,
      ).toBe(404);
      expect((await api.turn(slow, keyOf('dave'))).code).toBe(200);
      await api.finished(slow, undefined, keyOf('dave'));
    });
  });
});

/**
 * `client`, except that after `hold()` the next count of `user`'s running sessions (the quota's visibility read) is
 * held once read: `listed` settles when Temporal answered it, and the answer goes to the API after `release()`. What the API gets is
 * then what visibility said before anything done meanwhile: visibility lagging, on demand.
 */
function heldSessionCounts(client: Client, user: string) {
  let listed!: () => void;
  let release!: () => void;
  const held = {
    listed: new Promise<void>((resolve) => (listed = resolve)),
    released: new Promise<void>((resolve) => (release = resolve)),
  };
  let holding = false;
  const service = client.workflowService;
  const list = async (request: temporal.api.workflowservice.v1.IListWorkflowExecutionsRequest) => {
    const response = await service.listWorkflowExecutions(request);
    if (
      holding &&
      request.query?.includes("ExecutionStatus = 'Running'") &&
      request.query.includes(`SkillflowUser = '${user}'`)
    ) {
      holding = false;
      listed();
      await held.released;
    }
    return response;
  };
  const workflowService = new Proxy(service, {
    get: (target, name) => (name === 'listWorkflowExecutions' ? list : bound(target, name)),
  });
  const proxied = new Proxy(client, {
    get: (target, name) => (name === 'workflowService' ? workflowService : bound(target, name)),
  });
  return { client: proxied, hold: () => (holding = true), listed: held.listed, release };
}

function bound(target: object, name: string | symbol): unknown {
  const value: unknown = Reflect.get(target, name, target);
  return typeof value === 'function' ? value.bind(target) : value;
}
