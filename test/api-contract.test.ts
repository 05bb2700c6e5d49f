import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { turnEventSchemas } from '../core/schemas/events';
import { aliceKey, authHeaders, bobKey, buildTestApp } from './support/api';
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
  afterAll(async () => app?.close());

  it('every operation has a unique operationId', () => {
    const operations = Object.entries(document.paths as Record<string, Record<string, { operationId?: string }>>).flatMap(([route, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ operation: `${method.toUpperCase()} ${route}`, id: operation.operationId })),
    );
    expect(operations.filter((entry) => !entry.id)).toEqual([]);
    expect(new Set(operations.map((entry) => entry.id)).size).toBe(operations.length);
    expect(operations).toContainEqual({ operation: 'POST /v1/sessions/{id}/turns', id: 'startTurn' });
    expect(operations).toContainEqual({ operation: 'POST /v1/turns/{id}/checkpoints/{checkpointId}', id: 'answerCheckpoint' });
  });

  it('TurnEvent is a union discriminated by type, one component per event type of core\'s catalogue', () => {
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
    expect(schemas.CheckpointRequestedEvent.properties.checkpoint.required).toEqual(['id', 'name', 'kind', 'summary', 'params', 'paramsSchema', 'options', 'actions', 'requestedAt', 'expiresAt']);
    expect(schemas.MessageDeltaEvent.required).toEqual(['type', 'text']);
    expect(schemas.DoneEvent.properties.synthesized).toBeDefined();
  });

  it('Idempotency-Key on POST /v1/sessions: a retry returns the first session; another user or key gets another one', async () => {
    const create = (key: string | undefined, apiKey = aliceKey) =>
      app.inject({ method: 'POST', url: '/v1/sessions', headers: { ...authHeaders(apiKey), ...(key ? { 'idempotency-key': key } : {}) } });
    const key = `retry-${Date.now()}`;
    const first = await create(key);
    expect(first.statusCode).toBe(201);
    expect(first.headers.location).toBe(`/v1/sessions/${first.json().id}`);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const retry = await create(key);
    expect({ status: retry.statusCode, body: retry.json(), replayed: retry.headers['idempotent-replayed'], location: retry.headers.location }).toEqual({
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

  it('Location names what a 201 or 202 created or started', async () => {
    harness.fake.enqueue({ content: [toolUse('request_human_approval', { checkpoint: 'hold', summary: 'Hold?', kind: 'approval' })] });
    const sessionId = (await app.inject({ method: 'POST', url: '/v1/sessions', headers: authHeaders() })).json().id;
    const started = await app.inject({ method: 'POST', url: `/v1/sessions/${sessionId}/turns`, headers: authHeaders(), payload: { message: 'hold on' } });
    expect(started.statusCode).toBe(202);
    expect(started.headers.location).toBe(`/v1/turns/${started.json().id}`);
    await new ApiDriver(app).pending(started.json().id);
    const cancelled = await app.inject({ method: 'POST', url: `/v1/turns/${started.json().id}/cancel`, headers: authHeaders() });
    expect(cancelled.statusCode).toBe(202);
    expect(cancelled.headers.location).toBe(`/v1/turns/${started.json().id}`);
  });

  it('a client generated by openapi-typescript type-checks against a program that runs a turn, and the program runs', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-generated-'));
    fs.writeFileSync(path.join(dir, 'openapi.json'), JSON.stringify(document));
    execFileSync(binary('openapi-typescript'), [path.join(dir, 'openapi.json'), '-o', path.join(dir, 'api.d.ts')], { stdio: 'pipe' });
    fs.copyFileSync(path.join(__dirname, 'fixtures', 'generated-client-program.ts'), path.join(dir, 'program.ts'));
    execFileSync(
      binary('tsc'),
      ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--types', 'node', '--typeRoots', path.join(root, 'node_modules', '@types'), path.join(dir, 'program.ts')],
      { stdio: 'pipe', cwd: dir },
    );

    harness.fake.enqueue(
      { content: [text('Let me check.'), toolUse('request_human_approval', { checkpoint: 'go', summary: 'Go?', kind: 'approval', params: { n: 1 } })] },
      { content: [text('Generated clients work.')] },
    );
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    // Asynchronously: the API answering the program runs in this process.
    const { stdout: output } = await promisify(execFile)(process.execPath, ['--import', 'tsx', path.join(dir, 'program.ts'), url, aliceKey], { cwd: root, encoding: 'utf8' });
    expect(JSON.parse(output.trim().split('\n').pop()!)).toEqual({ status: 'completed', output: 'Generated clients work.', answered: 'go', events: expect.arrayContaining(['checkpoint.requested', 'done']) });
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
      ['--noEmit', '--strict', '--esModuleInterop', '--skipLibCheck', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--types', 'node', '--typeRoots', path.join(root, 'node_modules', '@types'), 'program.ts'],
      { stdio: 'pipe', cwd: dir },
    );
    const url = app.server.listening ? `http://127.0.0.1:${(app.server.address() as { port: number }).port}` : await app.listen({ port: 0, host: '127.0.0.1' });
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', pathToFileURL(require.resolve('tsx')).href, 'program.ts', url, aliceKey], { cwd: dir, encoding: 'utf8' });
    expect(JSON.parse(stdout)).toEqual({ session: 20, missing: 'not_found', turn: null, describe: 'done' });
  }, 60_000);
});
