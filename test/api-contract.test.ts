import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { turnEventSchemas } from '../core/schemas/events';
import { aliceKey, authHeaders, bobKey, buildTestApp, eventually } from './support/api';
import { text, toolUse } from './support/fake-anthropic';
import { useWorkerHarness } from './support/harness';
import { ApiDriver } from './support/scenario';

const root = path.resolve(__dirname, '..');
const binary = (name: string) => path.join(root, 'node_modules', '.bin', name);

/** What generated clients rely on: operation ids, typed events, Location, safe retries, and a generator that works. */
describe('API contract for clients', () => {
  const harness = useWorkerHarness('contract');
  let app: FastifyInstance;
  let document: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

  beforeAll(async () => {
    ({ app } = await buildTestApp(harness.env.client, harness.taskQueue));
    document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
  });
  harness.closeFirst(async () => app?.close());

  it('every operation has a unique operationId', () => {
    const operations = Object.entries(
      document.paths as Record<string, Record<string, { operationId?: string }>>,
    ).flatMap(([route, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({
        operation: `${method.toUpperCase()} ${route}`,
        id: operation.operationId,
      })),
    );
    expect(operations.filter((entry) => !entry.id)).toEqual([]);
    expect(new Set(operations.map((entry) => entry.id)).size).toBe(operations.length);
    expect(operations).toContainEqual({ operation: 'POST /v1/sessions/{id}/turns', id: 'startTurn' });
    expect(operations).toContainEqual({
      operation: 'POST /v1/turns/{id}/checkpoints/{checkpointId}',
      id: 'answerCheckpoint',
    });
  });

  it("TurnEvent is a union discriminated by type, one component per event type of core's catalogue", () => {
    const schemas = document.components.schemas;
    const union = schemas.TurnEvent;
    const types = [...Object.keys(turnEventSchemas), 'message.reset'];
    expect(Object.keys(union.discriminator.mapping).sort()).toEqual([...types].sort());
    expect(union.anyOf).toHaveLength(types.length);
    for (const type of types) {
      const ref: string = union.discriminator.mapping[type];
      expect(union.anyOf).toContainEqual({ $ref: ref });
      const component = schemas[ref.split('/').pop()!];
      expect(component.properties.type).toEqual({ type: 'string', enum: [type] });
    }
    expect(schemas.CheckpointRequestedEvent.required).toEqual(['type', 'checkpoint', 'offset', 'at']);
    expect(schemas.CheckpointRequestedEvent.properties.checkpoint.required).toEqual([
      'id',
      'name',
      'kind',
      'summary',
      'params',
      'paramsSchema',
      'options',
      'actions',
      'requestedAt',
      'expiresAt',
    ]);
    expect(schemas.MessageDeltaEvent.required).toEqual(['type', 'text']);
    expect(schemas.DoneEvent.properties.synthesized).toBeDefined();
  });

  it('Idempotency-Key on POST /v1/sessions: a retry returns the first session; another user or key gets another one', async () => {
    const create = (key: string | undefined, apiKey = aliceKey) =>
      app.inject({
        method: 'POST',
        url: '/v1/sessions',
        headers: { ...authHeaders(apiKey), ...(key ? { 'idempotency-key': key } : {}) },
      });
    const key = `retry-${Date.now()}`;
    const first = await create(key);
    expect(first.statusCode).toBe(201);
    expect(first.headers.location).toBe(`/v1/sessions/${first.json().id}`);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const retry = await create(key);
    expect({
      status: retry.statusCode,
      body: retry.json(),
      replayed: retry.headers['idempotent-replayed'],
      location: retry.headers.location,
    }).toEqual({
      status: 201,
      body: first.json(),
      replayed: 'true',
      location: first.headers.location,
    });
    expect((await create(key, bobKey)).json().id).not.toBe(first.json().id);
    expect((await create(`${key}-other`)).json().id).not.toBe(first.json().id);
    expect((await create(undefined)).json().id).not.toBe((await create(undefined)).json().id);
    expect((await create('has space')).statusCode).toBe(400);
    expect((await create('x'.repeat(256))).statusCode).toBe(400);
  });

  it('Idempotency-Key on POST .../turns: a retry returns the first turn, while it waits, after it ended and after the session continued as new', async () => {
    const { fake, env } = harness;
    const api = new ApiDriver(app);
    const sessionId = await api.createSession();
    const send = (payload: Record<string, unknown>, key?: string) =>
      app.inject({
        method: 'POST',
        url: `/v1/sessions/${sessionId}/turns`,
        headers: { ...authHeaders(), ...(key ? { 'idempotency-key': key } : {}) },
        payload,
      });
    const reply = (response: Awaited<ReturnType<typeof send>>) => ({
      status: response.statusCode,
      body: response.json(),
      replayed: response.headers['idempotent-replayed'],
      location: response.headers.location,
    });
    const parameters = (route: string) =>
      document.paths[route].post.parameters
        .filter((p: { in: string }) => p.in === 'header')
        .map((p: { name: string }) => p.name);
    expect(parameters('/v1/sessions/{id}/turns')).toEqual(['idempotency-key']);
    expect(parameters('/v1/turns/{id}/checkpoints/{checkpointId}')).toEqual(['idempotency-key']);

    fake.enqueue({
      content: [toolUse('request_human_approval', { checkpoint: 'hold', summary: 'Hold?', kind: 'approval' })],
    });
    const key = `turn-${Date.now()}`;
    const first = reply(await send({ message: 'first' }, key));
    expect(first).toMatchObject({ status: 202, body: { id: expect.any(String), sessionId }, replayed: undefined });
    const turnId = first.body.id as string;
    await api.pending(turnId);
    // While the turn waits, another message is 409; the retry is the turn itself.
    expect((await send({ message: 'first' })).statusCode).toBe(409);
    expect(reply(await send({ message: 'first' }, key))).toEqual({ ...first, replayed: 'true' });
    // The same key for another request: refused, the first stands.
    expect(reply(await send({ message: 'second' }, key))).toMatchObject({
      status: 422,
      body: { error: { code: 'idempotency_key_reused' } },
    });
    expect((await send({ message: 'first' }, 'x'.repeat(256))).statusCode).toBe(400);

    fake.enqueue({ content: [text('Held.')] });
    expect((await api.answer(turnId, 'cp-1', { action: 'approve' })).code).toBe(200);
    await api.finished(turnId);
    expect(reply(await send({ message: 'first' }, key))).toEqual({ ...first, replayed: 'true' });

    // Turns without a key until the session continues as new; the key still names the first turn after it.
    const session = env.client.workflow.getHandle(`session-${sessionId}`);
    const firstRun = (await session.describe()).runId;
    for (let n = 2; (await session.describe()).runId === firstRun; n++) {
      if (n > 15) throw new Error('the session never continued as new');
      fake.enqueue({ content: [text(`Answer ${n}.`)] });
      const started = await send({ message: `message ${n}` });
      expect(started.statusCode).toBe(202);
      await api.finished(started.json().id);
    }
    expect(reply(await send({ message: 'first' }, key))).toEqual({ ...first, replayed: 'true' });
    expect((await send({ message: 'second' }, key)).statusCode).toBe(422);

    // Two attempts at once with a new key: one turn.
    fake.enqueue({ content: [text('Once.')] });
    const [a, b] = (
      await Promise.all([send({ message: 'once' }, `${key}-b`), send({ message: 'once' }, `${key}-b`)])
    ).map(reply);
    expect([a.status, b.status, a.body.id === b.body.id, [a.replayed, b.replayed].filter(Boolean)]).toEqual([
      202,
      202,
      true,
      ['true'],
    ]);
    await api.finished(a.body.id);
    const turns = (
      await api.app.inject({ method: 'GET', url: `/v1/sessions/${sessionId}`, headers: authHeaders() })
    ).json().turns as Array<{ id: string; message: string }>;
    expect(turns.filter((turn) => turn.message === 'first' || turn.message === 'once').map((turn) => turn.id)).toEqual([
      turnId,
      a.body.id,
    ]);
  }, 120_000);

  it('Idempotency-Key on checkpoint answers: a retry returns the first answer, also after the turn went on and ended', async () => {
    const { fake } = harness;
    const api = new ApiDriver(app);
    fake.enqueue({
      content: [
        toolUse('request_human_approval', { checkpoint: 'go', summary: 'Go?', kind: 'approval', params: { speed: 1 } }),
      ],
    });
    const turnId = await api.startTurn('go somewhere');
    await api.pending(turnId);
    const answer = (payload: Record<string, unknown>, key?: string) =>
      app.inject({
        method: 'POST',
        url: `/v1/turns/${turnId}/checkpoints/cp-1`,
        headers: { ...authHeaders(), ...(key ? { 'idempotency-key': key } : {}) },
        payload,
      });
    const key = `answer-${Date.now()}`;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    fake.respond(async () => {
      await released;
      return { content: [text('Went.')] };
    });
    try {
      const first = await answer({ action: 'modify', overrides: { speed: 2 } }, key);
      expect({ status: first.statusCode, body: first.json() }).toEqual({
        status: 200,
        body: { checkpointId: 'cp-1', action: 'modify', by: 'alice' },
      });
      // The turn went on (its next model call is running): without the key a second answer is 409, with it the first answer.
      await eventually(
        async () => fake.requests.length,
        (count) => count === 2,
      );
      expect((await answer({ action: 'modify', overrides: { speed: 2 } })).statusCode).toBe(409);
      const retry = await answer({ action: 'modify', overrides: { speed: 2 } }, key);
      expect({ status: retry.statusCode, body: retry.json() }).toEqual({ status: 200, body: first.json() });
      // Another answer under the key is not a retry: the checkpoint is no longer pending.
      expect((await answer({ action: 'cancel' }, key)).json().error.code).toBe('checkpoint_not_pending');
    } finally {
      release();
    }
    await api.finished(turnId);
    fake.respond(undefined);
    const afterEnd = await answer({ action: 'modify', overrides: { speed: 2 } }, key);
    expect({ status: afterEnd.statusCode, body: afterEnd.json() }).toEqual({
      status: 200,
      body: { checkpointId: 'cp-1', action: 'modify', by: 'alice' },
    });
    expect((await answer({ action: 'modify', overrides: { speed: 2 } })).json().error.code).toBe(
      'checkpoint_not_pending',
    );
    expect((await answer({ action: 'approve' }, key)).json().error.code).toBe('checkpoint_not_pending');
    expect((await answer({ overrides: { speed: 2 }, action: 'modify' }, key)).statusCode).toBe(200);
    // One decision was taken, once.
    const events = (await app.inject({ method: 'GET', url: `/v1/turns/${turnId}/log`, headers: authHeaders() })).json()
      .events as Array<{ type: string }>;
    expect(events.filter((event) => event.type === 'checkpoint.resolved')).toHaveLength(1);
    expect(JSON.stringify(fake.requests[1].body.messages.at(-1))).toContain('speed');
  });

  it('Location names what a 201 or 202 created or started', async () => {
    harness.fake.enqueue({
      content: [toolUse('request_human_approval', { checkpoint: 'hold', summary: 'Hold?', kind: 'approval' })],
    });
    const sessionId = (await app.inject({ method: 'POST', url: '/v1/sessions', headers: authHeaders() })).json().id;
    const started = await app.inject({
      method: 'POST',
      url: `/v1/sessions/${sessionId}/turns`,
      headers: authHeaders(),
      payload: { message: 'hold on' },
    });
    expect(started.statusCode).toBe(202);
    expect(started.headers.location).toBe(`/v1/turns/${started.json().id}`);
    await new ApiDriver(app).pending(started.json().id);
    const cancelled = await app.inject({
      method: 'POST',
      url: `/v1/turns/${started.json().id}/cancel`,
      headers: authHeaders(),
    });
    expect(cancelled.statusCode).toBe(202);
    expect(cancelled.headers.location).toBe(`/v1/turns/${started.json().id}`);
  });

  it('a client generated by openapi-typescript type-checks against a program that runs a turn, and the program runs', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-generated-'));
    fs.writeFileSync(path.join(dir, 'openapi.json'), JSON.stringify(document));
    execFileSync(binary('openapi-typescript'), [path.join(dir, 'openapi.json'), '-o', path.join(dir, 'api.d.ts')], {
      stdio: 'pipe',
    });
    fs.copyFileSync(path.join(__dirname, 'fixtures', 'generated-client-program.ts'), path.join(dir, 'program.ts'));
    execFileSync(
      binary('tsc'),
      [
        '--noEmit',
        '--strict',
        '--target',
        'es2022',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--types',
        'node',
        '--typeRoots',
        path.join(root, 'node_modules', '@types'),
        path.join(dir, 'program.ts'),
      ],
      { stdio: 'pipe', cwd: dir },
    );

    harness.fake.enqueue(
      {
        content: [
          text('Let me check.'),
          toolUse('request_human_approval', { checkpoint: 'go', summary: 'Go?', kind: 'approval', params: { n: 1 } }),
        ],
      },
      { content: [text('Generated clients work.')] },
    );
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    // Asynchronously: the API answering the program runs in this process.
    const { stdout: output } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', path.join(dir, 'program.ts'), url, aliceKey],
      { cwd: root, encoding: 'utf8' },
    );
    expect(JSON.parse(output.trim().split('\n').pop()!)).toEqual({
      status: 'completed',
      output: 'Generated clients work.',
      answered: 'go',
      events: expect.arrayContaining(['checkpoint.requested', 'done']),
    });
  }, 90_000);

  it('the package exports its typed client as skillflow/client (TypeScript source, run with tsx)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-client-user-'));
    fs.mkdirSync(path.join(dir, 'node_modules'));
    fs.symlinkSync(root, path.join(dir, 'node_modules', 'skillflow'), 'dir');
    fs.writeFileSync(
      path.join(dir, 'program.ts'),
      `import { SkillflowClient, SkillflowApiError, type Turn, type StreamEvent } from 'skillflow/client';
      const client = new SkillflowClient({ baseUrl: process.argv[2], apiKey: process.argv[3] });
      const describe = (event: StreamEvent): string => (event.type === 'checkpoint.requested' ? event.checkpoint.summary : event.type);
      async function main(): Promise<void> {
        const session = await client.createSession({ idempotencyKey: 'package-export' });
        const missing = await client.getTurn('turn-0123456789abcdef0123-1').catch((err: unknown) => err);
        const turn: Turn | null = null;
        console.log(JSON.stringify({ session: session.id.length, missing: missing instanceof SkillflowApiError ? missing.code : 'no', turn, describe: describe({ type: 'done', output: 'x' }) }));
      }
      void main();\n`,
    );
    execFileSync(
      binary('tsc'),
      [
        '--noEmit',
        '--strict',
        '--esModuleInterop',
        '--skipLibCheck',
        '--target',
        'es2022',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--types',
        'node',
        '--typeRoots',
        path.join(root, 'node_modules', '@types'),
        'program.ts',
      ],
      { stdio: 'pipe', cwd: dir },
    );
    const url = app.server.listening
      ? `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
      : await app.listen({ port: 0, host: '127.0.0.1' });
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', pathToFileURL(require.resolve('tsx')).href, 'program.ts', url, aliceKey],
      { cwd: dir, encoding: 'utf8' },
    );
    expect(JSON.parse(stdout)).toEqual({ session: 20, missing: 'not_found', turn: null, describe: 'done' });
  }, 60_000);
});
