import { DefaultLogger, Runtime, type LogEntry } from '@temporalio/worker';
import type { FastifyInstance } from 'fastify';
import { internalError } from '../core/errors';
import { defineTool, Type } from '../lib/tools/define-tool';
import { builtinTools } from '../lib/tools/builtin';
import { ToolRegistry } from '../lib/tools/registry';
import { buildTestApp } from './support/api';
import { testDeps } from './support/deps';
import { startFakeAnthropic, text, toolUse, type FakeAnthropic } from './support/fake-anthropic';
import { ApiDriver } from './support/scenario';
import { TemporalTestEnv } from './support/temporal';

const secretPath = '/srv/skillflow-private/credentials/tokens.json';
const eacces = () =>
  Object.assign(new Error(`EACCES: permission denied, open '${secretPath}'`), {
    code: 'EACCES',
    errno: -13,
    path: secretPath,
  });

/** A registered tool whose code fails with an error that names a path of the worker's machine. */
const leaky = defineTool({
  name: 'leaky_read',
  description: 'Reads a record.',
  category: 'ops',
  input: Type.Object({}),
  idempotent: true,
  retry: { maximumAttempts: 1 },
  run() {
    throw eacces();
  },
});

/** A tool registry that cannot be read: every turn on its worker fails when it starts. */
class UnreadableRegistry extends ToolRegistry {
  override catalog(): never {
    throw eacces();
  }

  override catalogReference(): never {
    throw eacces();
  }
}

/** Issue 13.11: internal error text reaches neither clients nor the model; it goes to the worker's log at error level. */
describe('internal errors', () => {
  const logged: LogEntry[] = [];
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let app: FastifyInstance;
  let brokenApp: FastifyInstance;
  beforeAll(async () => {
    env = await TemporalTestEnv.connect({
      installRuntime: () => Runtime.install({ logger: new DefaultLogger('ERROR', (entry) => logged.push(entry)) }),
    });
    fake = await startFakeAnthropic();
    const queue = env.newTaskQueue('internal-errors');
    await env.startWorker(queue, testDeps(fake.url, { tools: [leaky], rootGrants: ['leaky_read'] }));
    ({ app } = await buildTestApp(env.client, queue));
    const brokenQueue = env.newTaskQueue('internal-errors-broken');
    await env.startWorker(brokenQueue, testDeps(fake.url, { registry: new UnreadableRegistry(builtinTools()) }));
    ({ app: brokenApp } = await buildTestApp(env.client, brokenQueue));
  });
  afterAll(async () => {
    await app?.close();
    await brokenApp?.close();
    await env?.close();
    await fake?.close();
  });

  const errorLogsWithThePath = () =>
    logged.filter(
      (entry) =>
        entry.level === 'ERROR' &&
        JSON.stringify({ message: entry.message, meta: entry.meta }, (_key, value: unknown) =>
          typeof value === 'bigint' ? String(value) : value,
        ).includes(secretPath),
    );

  it('a registered tool failing with an EACCES: the model gets the generic internal error, the log gets the path', async () => {
    fake.enqueue({ content: [toolUse('leaky_read', {})] }, { content: [text('I could not read it.')] });
    const api = new ApiDriver(app);
    const turnId = await api.startTurn('read the record');
    const turn = await api.finished(turnId);
    expect(turn).toMatchObject({ status: 'completed', output: 'I could not read it.' });
    const seen = JSON.stringify(fake.requests[1]!.body.messages);
    expect(seen).toContain(`leaky_read failed: ${internalError.message}`);
    expect(seen).not.toContain(secretPath);
    expect(seen).not.toContain('EACCES');
    expect(JSON.stringify((await api.turn(turnId)).body)).not.toContain(secretPath);
    const events = await app.inject({
      method: 'GET',
      url: `/v1/turns/${turnId}/log`,
      headers: { authorization: 'Bearer alice-key-0123456789abcdef' },
    });
    expect(events.body).not.toContain(secretPath);
    expect(
      errorLogsWithThePath().some((entry) => entry.message.includes('Tool leaky_read failed with an internal error')),
    ).toBe(true);
  });

  it('a turn failing with an EACCES: turn.error is internal_error without the path; the log has it', async () => {
    const api = new ApiDriver(brokenApp);
    const turnId = await api.startTurn('a message for a worker that cannot start turns');
    const view = await api.finished(turnId, 30_000);
    expect(view).toMatchObject({ status: 'failed', reason: 'internal_error', error: internalError });
    expect(JSON.stringify(view)).not.toContain(secretPath);
    expect(
      fake.requests.filter((request) => JSON.stringify(request.body).includes('a worker that cannot start turns')),
    ).toEqual([]);
    expect(
      errorLogsWithThePath().some((entry) => entry.message.includes('The run failed with an internal error')),
    ).toBe(true);
  });
});
