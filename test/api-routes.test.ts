import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { SkillRegistry } from '../lib/skills';
import { authHeaders, buildTestApp, eventually } from './support/api';
import { bundledSkillsDir } from './support/deps';
import { text, toolUse, type FakeAnthropic } from './support/fake-anthropic';
import { ApiDriver } from './support/scenario';
import { useWorkerHarness } from './support/harness';
import type { TemporalTestEnv } from './support/temporal';

const exam = 'exam-mode-tuner';
const ask = (checkpoint: string, extra: Record<string, unknown> = {}) =>
  toolUse('request_human_approval', { checkpoint, summary: `Decide ${checkpoint}`, kind: 'approval', ...extra });
const examParams = () =>
  ask('exam_params', { params: { question_count: 2, time_limit_min: 35, concepts: ['arrays'] } });
const skillCatalog = () =>
  new SkillRegistry({ skillsDir: bundledSkillsDir, storeDir: fs.mkdtempSync(path.join(os.tmpdir(), 'sf-store-')) });

/** Every route through `app.inject`, with its success and error codes, in the one error shape. */
describe('API routes', () => {
  const harness = useWorkerHarness('routes');
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let app: FastifyInstance;
  let api: ApiDriver;
  let taskQueue: string;
  const others: FastifyInstance[] = [];
  /** Workflows of deleted sessions: Temporal removes closed executions in the background; the last test checks they went. */
  const deletedWorkflows: string[] = [];

  /** Another app on the same worker with other settings. */
  const appWith = async (settings: Record<string, string>) => {
    const { app: other } = await buildTestApp(env.client, taskQueue, settings, { skills: skillCatalog() });
    others.push(other);
    return other;
  };
  const inject = (
    target: FastifyInstance,
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    payload?: unknown,
    headers = authHeaders(),
  ) =>
    target.inject({
      method,
      url,
      headers,
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });
  const call = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) => inject(app, method, url, payload);
  const expectError = (
    response: { statusCode: number; json(): unknown; body: string; headers: Record<string, unknown> },
    status: number,
    code: string,
  ) => {
    expect({ status: response.statusCode, body: response.json() }).toEqual({
      status,
      body: { error: { code, message: expect.any(String), requestId: response.headers['x-request-id'] } },
    });
    expect(response.body).not.toMatch(/\bat .+\.(ts|js):\d+/);
  };

  beforeAll(async () => {
    ({ env, fake, taskQueue } = harness);
    ({ app } = await buildTestApp(env.client, taskQueue, {}, { skills: skillCatalog() }));
    api = new ApiDriver(app);
  });
  harness.closeFirst(async () => {
    for (const other of others) await other.close();
    await app?.close();
  });

  describe('sessions', () => {
    it('POST 201, GET one with its turns (status, message, output), GET the list (paginated)', async () => {
      fake.enqueue({ content: [text('First reply.')] });
      const sessionId = await api.createSession();
      const turnId = (await api.sendMessage(sessionId, { message: 'first message' })).body.id;
      await api.finished(turnId);

      const one = await call('GET', `/v1/sessions/${sessionId}`);
      expect(one.statusCode).toBe(200);
      expect(one.json()).toEqual({
        id: sessionId,
        userId: 'alice',
        createdAt: expect.any(String),
        activeTurnId: null,
        turnCount: 1,
        turns: [
          {
            id: turnId,
            number: 1,
            message: 'first message',
            skill: null,
            status: 'completed',
            reason: null,
            output: 'First reply.',
            error: null,
            createdAt: expect.any(String),
            endedAt: expect.any(String),
          },
        ],
      });

      const second = await api.createSession();
      const listed = await eventually(
        async () => (await call('GET', '/v1/sessions?limit=100')).json(),
        (page) => [sessionId, second].every((id) => page.sessions.some((s: { id: string }) => s.id === id)),
      );
      expect(listed.sessions.every((s: { userId: string }) => s.userId === 'alice')).toBe(true);
      expect(listed.sessions.find((s: { id: string }) => s.id === sessionId)).toEqual({
        id: sessionId,
        userId: 'alice',
        createdAt: expect.any(String),
      });

      const first = (await call('GET', '/v1/sessions?limit=1')).json();
      expect(first.sessions).toHaveLength(1);
      expect(first.nextCursor).toEqual(expect.any(String));
      const next = (await call('GET', `/v1/sessions?limit=1&cursor=${first.nextCursor}`)).json();
      expect(next.sessions).toHaveLength(1);
      expect(next.sessions[0].id).not.toBe(first.sessions[0].id);
    });

    it('GET shows the active turn waiting at its checkpoint', async () => {
      fake.enqueue({ content: [ask('hold')] });
      const sessionId = await api.createSession();
      const turnId = (await api.sendMessage(sessionId, { message: 'wait here' })).body.id;
      await api.pending(turnId);
      const session = (await call('GET', `/v1/sessions/${sessionId}`)).json();
      expect(session.activeTurnId).toBe(turnId);
      expect(session.turns[0]).toMatchObject({ id: turnId, status: 'waiting' });
      expect((await call('POST', `/v1/turns/${turnId}/cancel`)).statusCode).toBe(202);
      await api.finished(turnId);
    });

    it('DELETE cancels the waiting turn, removes the session and its turns: everything 404s afterwards', async () => {
      fake.enqueue({ content: [text('done one')] }, { content: [ask('pending_at_delete')] });
      const sessionId = await api.createSession();
      const first = (await api.sendMessage(sessionId, { message: 'one' })).body.id;
      await api.finished(first);
      const second = (await api.sendMessage(sessionId, { message: 'two' })).body.id;
      await api.pending(second);

      const deleted = await call('DELETE', `/v1/sessions/${sessionId}`);
      expect(deleted.statusCode).toBe(204);
      expect(deleted.body).toBe('');
      expectError(await call('GET', `/v1/sessions/${sessionId}`), 404, 'not_found');
      expectError(await call('GET', `/v1/turns/${first}`), 404, 'not_found');
      expectError(await call('GET', `/v1/turns/${second}`), 404, 'not_found');
      expectError(await call('POST', `/v1/sessions/${sessionId}/turns`, { message: 'again' }), 404, 'not_found');
      expectError(await call('DELETE', `/v1/sessions/${sessionId}`), 404, 'not_found');
      deletedWorkflows.push(`session-${sessionId}`, first, second);
    });

    it('404 for unknown sessions, 400 for malformed ids and queries', async () => {
      expectError(await call('GET', '/v1/sessions/0123456789abcdef0123'), 404, 'not_found');
      expectError(await call('DELETE', '/v1/sessions/0123456789abcdef0123'), 404, 'not_found');
      expectError(await call('GET', '/v1/sessions/NOT-AN-ID'), 400, 'invalid_request');
      expectError(await call('GET', '/v1/sessions?limit=0'), 400, 'invalid_request');
      expectError(await call('GET', '/v1/sessions?limit=1000'), 400, 'invalid_request');
      expectError(await call('GET', '/v1/sessions?cursor=bm90LWEtdG9rZW4'), 400, 'invalid_cursor');
    });
  });

  describe('starting turns', () => {
    it('202 at once; 409 while the turn runs or waits; supersede cancels it and starts the next', async () => {
      fake.enqueue({ content: [ask('blocking')] }, { content: [text('Superseding answer.')] });
      const sessionId = await api.createSession();
      const started = await api.sendMessage(sessionId, { message: 'first' });
      expect(started).toEqual({ code: 202, body: { id: `turn-${sessionId}-1`, sessionId, status: 'running' } });
      await api.pending(started.body.id);
      const busy = await call('POST', `/v1/sessions/${sessionId}/turns`, { message: 'second' });
      expectError(busy, 409, 'turn_in_progress');
      const superseding = await api.sendMessage(sessionId, { message: 'second', supersede: true });
      expect(superseding.code).toBe(202);
      expect((await api.turn(started.body.id)).body).toMatchObject({ status: 'cancelled', reason: 'cancelled' });
      expect(await api.finished(superseding.body.id)).toMatchObject({
        status: 'completed',
        output: 'Superseding answer.',
      });
    });

    it('?wait=true answers 200 with the finished turn, or with the turn waiting at a checkpoint', async () => {
      fake.enqueue({ content: [text('Waited for this.')] }, { content: [ask('waited')] });
      const sessionId = await api.createSession();
      const done = await call('POST', `/v1/sessions/${sessionId}/turns?wait=true`, { message: 'hold on' });
      expect(done.statusCode).toBe(200);
      expect(done.json()).toMatchObject({
        id: `turn-${sessionId}-1`,
        status: 'completed',
        output: 'Waited for this.',
        skill: null,
        step: null,
      });
      const waiting = await call('POST', `/v1/sessions/${sessionId}/turns?wait=true`, { message: 'ask me' });
      expect(waiting.statusCode).toBe(200);
      expect(waiting.json()).toMatchObject({ status: 'waiting', pendingCheckpoint: { id: 'cp-1', name: 'waited' } });
      await api.answer(waiting.json().id, 'cp-1', { action: 'cancel' });
      fake.enqueue({ content: [text('cancelled')] });
      await api.finished(waiting.json().id);
    });

    it('?wait=true gives up after SKILLFLOW_WAIT_TIMEOUT_MS and answers 202', async () => {
      const quick = await appWith({ SKILLFLOW_WAIT_TIMEOUT_MS: '300' });
      fake.enqueue({ content: [text('Slow answer, streamed slowly.')], delayMs: 150 });
      const sessionId = await new ApiDriver(quick).createSession();
      const started = Date.now();
      const response = await inject(quick, 'POST', `/v1/sessions/${sessionId}/turns?wait=true`, { message: 'slow' });
      expect(response.statusCode).toBe(202);
      // The configured 1 s, not the 30 s default: far under it even on a loaded machine (4.5 s was seen at load 16).
      expect(Date.now() - started).toBeLessThan(15_000);
      await api.finished(response.json().id);
    });

    it('skill starts the turn with that skill loaded; GET shows skill and step; unknown skills are refused', async () => {
      fake.enqueue({ content: [examParams()] });
      const sessionId = await api.createSession();
      const started = await api.sendMessage(sessionId, { message: 'test me', skill: exam });
      expect(started.code).toBe(202);
      await api.pending(started.body.id);
      const view = (await api.turn(started.body.id)).body;
      expect(view).toMatchObject({ skill: exam, status: 'waiting' });
      expect(view).toHaveProperty('step');
      const session = (await call('GET', `/v1/sessions/${sessionId}`)).json();
      expect(session.turns[0].skill).toBe(exam);

      const byskill = await eventually(
        async () => (await call('GET', `/v1/turns?skill=${exam}&session=${sessionId}`)).json(),
        (page) => page.turns.length === 1,
      );
      expect(byskill.turns[0]).toMatchObject({
        id: started.body.id,
        skill: exam,
        status: 'waiting',
        checkpoint: 'exam_params',
      });

      expectError(
        await call('POST', `/v1/sessions/${sessionId}/turns`, { message: 'x', skill: 'no-such-skill' }),
        400,
        'unknown_skill',
      );
      expectError(
        await call('POST', `/v1/sessions/${sessionId}/turns`, { message: 'x', skill: 'Bad Name' }),
        400,
        'invalid_request',
      );
      expect((await call('POST', `/v1/turns/${started.body.id}/cancel`)).statusCode).toBe(202);
      await api.finished(started.body.id);
    });

    it('400 for a missing or empty message or unknown fields, 400 for a message over the limit, 413 and 415 for bodies', async () => {
      const limited = await appWith({ SKILLFLOW_MAX_MESSAGE_CHARS: '10', SKILLFLOW_BODY_LIMIT_BYTES: '1024' });
      const sessionId = await new ApiDriver(limited).createSession();
      const url = `/v1/sessions/${sessionId}/turns`;
      expectError(await inject(limited, 'POST', url, {}), 400, 'invalid_request');
      expectError(await inject(limited, 'POST', url, { message: '' }), 400, 'invalid_request');
      expectError(await inject(limited, 'POST', url, { message: 'hi', mode: 'x' }), 400, 'invalid_request');
      expectError(await inject(limited, 'POST', url, { message: 'eleven chars' }), 400, 'message_too_long');
      expectError(await inject(limited, 'POST', url, { message: 'x'.repeat(2_000) }), 413, 'payload_too_large');
      const plain = await limited.inject({
        method: 'POST',
        url,
        headers: { ...authHeaders(), 'content-type': 'application/xml' },
        payload: '<message/>',
      });
      expectError(plain, 415, 'unsupported_media_type');
      const broken = await limited.inject({
        method: 'POST',
        url,
        headers: { ...authHeaders(), 'content-type': 'application/json' },
        payload: '{"message":',
      });
      expectError(broken, 400, 'invalid_request');
    });
  });

  describe('turns', () => {
    it('GET one has every documented field', async () => {
      fake.enqueue({ content: [text('All fields.')] });
      const turnId = await api.startTurn('fields');
      const turn = await api.finished(turnId);
      expect(Object.keys(turn).sort()).toEqual(
        [
          'id',
          'sessionId',
          'workflowId',
          'status',
          'reason',
          'pendingCheckpoint',
          'output',
          'error',
          'skill',
          'step',
          'usage',
          'skills',
          'artifacts',
          'createdAt',
          'updatedAt',
        ].sort(),
      );
      expect(turn).toMatchObject({
        id: turnId,
        workflowId: turnId,
        status: 'completed',
        output: 'All fields.',
        error: null,
        reason: null,
        skills: [],
        artifacts: [],
      });
    });

    it("GET /v1/turns lists the caller's turns, filtered by status and session, newest first, paginated", async () => {
      fake.enqueue({ content: [text('one')] }, { content: [text('two')] }, { content: [ask('third_waits')] });
      const sessionId = await api.createSession();
      const ids: string[] = [];
      for (const message of ['one', 'two']) {
        ids.push((await api.sendMessage(sessionId, { message })).body.id);
        await api.finished(ids.at(-1)!);
      }
      ids.push((await api.sendMessage(sessionId, { message: 'three' })).body.id);
      await api.pending(ids[2]);

      const all = await eventually(
        async () => (await call('GET', `/v1/turns?session=${sessionId}`)).json(),
        (page) => page.turns.length === 3 && page.turns[0].status === 'waiting',
      );
      expect(all.turns.map((t: { id: string }) => t.id)).toEqual([ids[2], ids[1], ids[0]]);
      expect(all.turns[0]).toEqual({
        id: ids[2],
        sessionId,
        userId: 'alice',
        status: 'waiting',
        skill: null,
        step: null,
        checkpoint: 'third_waits',
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const completed = (await call('GET', `/v1/turns?session=${sessionId}&status=completed`)).json();
      expect(completed.turns.map((t: { id: string }) => t.id).sort()).toEqual([ids[0], ids[1]].sort());
      const page1 = (await call('GET', `/v1/turns?session=${sessionId}&limit=2`)).json();
      const page2 = (await call('GET', `/v1/turns?session=${sessionId}&limit=2&cursor=${page1.nextCursor}`)).json();
      expect([...page1.turns, ...page2.turns].map((t: { id: string }) => t.id)).toEqual(
        all.turns.map((t: { id: string }) => t.id),
      );
      expect(page2.nextCursor).toBeNull();
      expectError(await call('GET', '/v1/turns?status=asleep'), 400, 'invalid_request');

      expect((await call('POST', `/v1/turns/${ids[2]}/cancel`)).statusCode).toBe(202);
      await api.finished(ids[2]);
      const cancelled = await eventually(
        async () => (await call('GET', `/v1/turns?session=${sessionId}&status=cancelled`)).json(),
        (page) => page.turns.length === 1,
      );
      expect(cancelled.turns[0].id).toBe(ids[2]);
    });

    it('a turn terminated in Temporal reads and lists as failed with reason terminated', async () => {
      fake.enqueue({ content: [ask('terminate_me')] });
      const turnId = await api.startTurn('terminate');
      await api.pending(turnId);
      await env.client.workflow.getHandle(turnId).terminate('stop');
      expect((await api.turn(turnId)).body).toMatchObject({
        status: 'failed',
        reason: 'terminated',
        error: { code: 'terminated' },
      });
      const sessionId = turnId.split('-')[1];
      const failed = await eventually(
        async () => (await call('GET', `/v1/turns?session=${sessionId}&status=failed`)).json(),
        (page) => page.turns.length === 1,
      );
      expect(failed.turns[0]).toMatchObject({ id: turnId, status: 'failed' });
    });

    it('POST cancel: 202, the turn ends cancelled; 409 once ended; 404 when unknown', async () => {
      fake.enqueue({ content: [ask('cancel_me')] });
      const turnId = await api.startTurn('cancel');
      await api.pending(turnId);
      const accepted = await call('POST', `/v1/turns/${turnId}/cancel`);
      expect({ code: accepted.statusCode, body: accepted.json() }).toEqual({
        code: 202,
        body: { id: turnId, cancelRequested: true },
      });
      expect(await api.finished(turnId)).toMatchObject({ status: 'cancelled', reason: 'cancelled' });
      expectError(await call('POST', `/v1/turns/${turnId}/cancel`), 409, 'turn_ended');
      expectError(await call('POST', '/v1/turns/turn-0123456789abcdef0123-1/cancel'), 404, 'not_found');
      expectError(await call('GET', '/v1/turns/not-a-turn'), 400, 'invalid_request');
    });

    it('GET events over inject: the whole log of an ended turn as SSE, ids = offsets, then the end', async () => {
      fake.enqueue({ content: [text('SSE body.')] });
      const turnId = await api.startTurn('sse');
      await api.finished(turnId);
      const response = await call('GET', `/v1/turns/${turnId}/events`);
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      const blocks = response.body.split('\n\n').filter((block) => block.includes('data: '));
      const ids = blocks.map((block) => Number(/^id: (\d+)$/m.exec(block)?.[1]));
      expect(ids).toEqual(ids.map((_, i) => i + 1));
      expect(JSON.parse(blocks.at(-1)!.split('data: ')[1])).toMatchObject({ type: 'done', output: 'SSE body.' });
      const resumed = await app.inject({
        method: 'GET',
        url: `/v1/turns/${turnId}/events`,
        headers: { ...authHeaders(), 'last-event-id': String(ids.length - 1) },
      });
      expect(resumed.body.split('\n\n').filter((block) => block.includes('data: '))).toHaveLength(1);
      expectError(await call('GET', `/v1/turns/${turnId}/events?after=-1`), 400, 'invalid_request');
      expectError(await call('GET', '/v1/turns/turn-0123456789abcdef0123-1/events'), 404, 'not_found');
    });
  });

  describe('skills', () => {
    it('GET /v1/skills lists the catalog, ?category= filters; GET /v1/skills/:name has the details', async () => {
      const all = await call('GET', '/v1/skills');
      expect(all.statusCode).toBe(200);
      const names = all.json().skills.map((s: { name: string }) => s.name);
      expect(names).toEqual(expect.arrayContaining([exam, 'code-review', 'simple-writing']));
      const learning = (await call('GET', '/v1/skills?category=learning')).json().skills;
      expect(learning.length).toBeGreaterThan(0);
      expect(learning.every((s: { category: string }) => s.category === 'learning')).toBe(true);
      expect((await call('GET', '/v1/skills?category=none-such')).json()).toEqual({ skills: [] });

      const detail = await call('GET', `/v1/skills/${exam}`);
      expect(detail.statusCode).toBe(200);
      expect(detail.json()).toMatchObject({
        name: exam,
        category: 'learning',
        plan: expect.any(String),
        steps: expect.arrayContaining(['question-generation']),
        checkpoints: expect.arrayContaining(['exam_params']),
        checkpointSpecs: expect.arrayContaining([expect.objectContaining({ name: 'exam_params', kind: 'approval' })]),
        subskills: expect.arrayContaining(['question-generation']),
      });
      expectError(await call('GET', '/v1/skills/no-such-skill'), 404, 'not_found');
      expectError(await call('GET', '/v1/skills/Not_A_Name'), 400, 'invalid_request');
    });

    it('503 when the process has no catalog', async () => {
      const { app: bare } = await buildTestApp(env.client, taskQueue);
      others.push(bare);
      expectError(await inject(bare, 'GET', '/v1/skills'), 503, 'unavailable');
    });
  });

  describe('service routes, errors and limits', () => {
    it('healthz and readyz need no key; readyz is 503 without Temporal; docs and openapi.json are served', async () => {
      expect((await app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
      expect((await app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ready', temporal: 'ok' });
      const docs = await app.inject({ method: 'GET', url: '/docs/' });
      expect(docs.statusCode).toBe(200);
      expect(docs.headers['content-type']).toContain('text/html');
      const down = await offlineApp();
      expectError(await down.inject({ method: 'GET', url: '/readyz' }), 503, 'not_ready');
    });

    it('the OpenAPI document validates and lists every route', async () => {
      const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
      const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sf-openapi-')), 'openapi.json');
      fs.writeFileSync(file, JSON.stringify(document));
      const script = `import { Validator } from '@seriousme/openapi-schema-validator';
        import fs from 'node:fs';
        const result = await new Validator().validate(JSON.parse(fs.readFileSync(process.argv[1], 'utf8')));
        process.stdout.write(JSON.stringify(result));`;
      const result = JSON.parse(
        execFileSync(process.execPath, ['--input-type=module', '-e', script, file], {
          cwd: path.resolve(__dirname, '..'),
          encoding: 'utf8',
        }),
      );
      expect(result).toEqual({ valid: true });
      const operations = Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(
        ([route, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${route}`),
      );
      expect(operations.sort()).toEqual(
        [
          'GET /healthz',
          'GET /readyz',
          'POST /v1/sessions',
          'GET /v1/sessions',
          'GET /v1/sessions/{id}',
          'DELETE /v1/sessions/{id}',
          'POST /v1/sessions/{id}/turns',
          'POST /v1/sessions/{id}/links',
          'GET /v1/sessions/{id}/links',
          'DELETE /v1/sessions/{id}/links/{linkId}',
          'POST /v1/links/exchange',
          'GET /v1/links/current',
          'GET /v1/turns',
          'GET /v1/turns/{id}',
          'GET /v1/turns/{id}/events',
          'GET /v1/turns/{id}/ws',
          'POST /v1/turns/{id}/cancel',
          'GET /v1/turns/{id}/log',
          'POST /v1/turns/{id}/checkpoints/{checkpointId}',
          'POST /v1/stream-tokens',
          'GET /v1/skills',
          'GET /v1/skills/{name}',
        ].sort(),
      );
    });

    it('unknown routes 404 in the error shape; Temporal outages are 503 without internals', async () => {
      expectError(await call('GET', '/v1/nothing-here'), 404, 'not_found');
      expectError(await call('DELETE', '/v1/turns/turn-0123456789abcdef0123-1'), 404, 'not_found');
      const down = await offlineApp();
      const response = await inject(down, 'GET', '/v1/turns/turn-0123456789abcdef0123-1');
      expect([503]).toContain(response.statusCode);
      expect(['unavailable', 'timeout']).toContain(response.json().error.code);
      expect(response.body).not.toMatch(/grpc|ECONNREFUSED|stack/i);
    });

    it('a request that outlasts SKILLFLOW_REQUEST_TIMEOUT_MS is answered 503 timeout', async () => {
      const stuck = { describe: () => new Promise(() => undefined) };
      const hanging = { workflow: { getHandle: () => stuck }, options: { namespace: 'default' } } as unknown as Client;
      const { app: slow } = await buildTestApp(hanging, taskQueue, { SKILLFLOW_REQUEST_TIMEOUT_MS: '1000' });
      others.push(slow);
      const started = Date.now();
      expectError(await inject(slow, 'GET', '/v1/turns/turn-0123456789abcdef0123-1'), 503, 'timeout');
      // The configured 1 s, not the 30 s default: far under it even on a loaded machine (4.5 s was seen at load 16).
      expect(Date.now() - started).toBeLessThan(15_000);
    });

    it('rate limit per user: 429 with retry-after in the error shape; other users are unaffected', async () => {
      const limited = await appWith({ SKILLFLOW_RATE_LIMIT: '3' });
      for (let i = 0; i < 3; i += 1)
        expect((await inject(limited, 'GET', '/v1/turns/turn-0123456789abcdef0123-1')).statusCode).toBe(404);
      const refused = await inject(limited, 'GET', '/v1/turns/turn-0123456789abcdef0123-1');
      expectError(refused, 429, 'rate_limited');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      const other = await inject(limited, 'GET', '/v1/turns/turn-0123456789abcdef0123-1', undefined, {
        authorization: 'Bearer bob-key-0123456789abcdef01',
      });
      expect(other.statusCode).toBe(404);
      expect((await limited.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    });

    it('CORS: configured origins get the headers, also on errors and preflights; others do not', async () => {
      const browser = await appWith({ SKILLFLOW_CORS_ORIGINS: 'https://app.example.com' });
      const preflight = await browser.inject({
        method: 'OPTIONS',
        url: '/v1/sessions',
        headers: {
          origin: 'https://app.example.com',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization,content-type',
        },
      });
      expect(preflight.statusCode).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe('https://app.example.com');
      expect(String(preflight.headers['access-control-allow-headers'])).toContain('authorization');
      const denied = await browser.inject({
        method: 'GET',
        url: '/v1/turns',
        headers: { origin: 'https://app.example.com' },
      });
      expect(denied.statusCode).toBe(401);
      expect(denied.headers['access-control-allow-origin']).toBe('https://app.example.com');
      const foreign = await browser.inject({
        method: 'GET',
        url: '/healthz',
        headers: { origin: 'https://evil.example.com' },
      });
      expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
      expect(
        (await app.inject({ method: 'GET', url: '/healthz', headers: { origin: 'https://app.example.com' } })).headers[
          'access-control-allow-origin'
        ],
      ).toBeUndefined();
    });
  });

  it('deleted sessions and their turns are gone from Temporal too, not only hidden', async () => {
    expect(deletedWorkflows.length).toBeGreaterThan(0);
    const gone = (id: string) =>
      env.client.workflow
        .getHandle(id)
        .describe()
        .then(
          () => false,
          () => true,
        );
    await eventually(
      async () => Promise.all(deletedWorkflows.map(gone)),
      (results) => results.every(Boolean),
      90_000,
    );
  }, 100_000);

  /** An app whose Temporal client points at a port nobody listens on. */
  async function offlineApp(): Promise<FastifyInstance> {
    const connection = Connection.lazy({ address: '127.0.0.1:1', interceptors: [] });
    const { app: down } = await buildTestApp(new Client({ connection }), taskQueue, {
      SKILLFLOW_REQUEST_TIMEOUT_MS: '5000',
    });
    down.addHook('onClose', async () => connection.close());
    others.push(down);
    return down;
  }
});
