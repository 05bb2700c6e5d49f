import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { ApiMetrics, serveMetrics } from '../api/metrics';
import { freePort } from '../lib/dev-server';
import { createLogger } from '../lib/logging';
import { serveWorkerHealth } from '../worker/health';
import { workerReadyMarker } from '../worker/ready';
import { installRuntime } from '../worker/runtime';
import { authHeaders, buildTestApp, eventually } from './support/api';
import { testDeps } from './support/deps';
import { startFakeAnthropic, text, type FakeAnthropic } from './support/fake-anthropic';
import { ApiDriver } from './support/scenario';
import { TemporalTestEnv } from './support/temporal';
import { workflowTypes } from '../workflows/definitions';

type LogLine = Record<string, unknown> & { level: string; msg: string };

const root = path.resolve(__dirname, '..');

/** A pino destination that keeps every JSON line. */
function logCapture() {
  const lines: LogLine[] = [];
  return { lines, destination: { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) } };
}

/**
 * Request ids, structured logs, metrics and the worker's health endpoints, against the suite's Temporal server. This
 * file's Temporal runtime is the worker's own (worker/runtime.ts): JSON logs at DEBUG, Prometheus metrics on a port.
 */
describe('observability', () => {
  const workerLog = logCapture();
  let workerMetricsPort: number;
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let taskQueue: string;
  const apps: FastifyInstance[] = [];

  beforeAll(async () => {
    workerMetricsPort = await freePort();
    env = await TemporalTestEnv.connect({
      installRuntime: () =>
        installRuntime(
          { workerLogLevel: 'DEBUG', workerMetricsPort, host: '127.0.0.1' },
          createLogger('skillflow-worker', 'debug', workerLog.destination),
        ),
    });
    fake = await startFakeAnthropic();
    taskQueue = env.newTaskQueue('observe');
    await env.startWorker(taskQueue, testDeps(fake.url));
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await env?.close();
    await fake?.close();
  });

  const appWith = async (
    settings: Record<string, string> = {},
    client: Client = env.client,
    extra: Parameters<typeof buildTestApp>[3] = {},
  ) => {
    const apiLog = logCapture();
    const { app } = await buildTestApp(client, taskQueue, settings, {
      logger: createLogger('skillflow-api', 'info', apiLog.destination),
      ...extra,
    });
    apps.push(app);
    return { app, log: apiLog.lines };
  };

  it("every response has x-request-id (the caller's when acceptable), errors carry it in the body, the turn in its input and logs", async () => {
    const { app } = await appWith();
    const health = await app.inject({ method: 'GET', url: '/healthz' });
    expect(health.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const mine = await app.inject({
      method: 'GET',
      url: '/v1/turns/turn-0123456789abcdef0123-1',
      headers: { ...authHeaders(), 'x-request-id': 'client-req.42' },
    });
    expect(mine.headers['x-request-id']).toBe('client-req.42');
    expect(mine.json()).toEqual({
      error: { code: 'not_found', message: expect.any(String), requestId: 'client-req.42' },
    });
    const hostile = await app.inject({
      method: 'GET',
      url: '/healthz',
      headers: { 'x-request-id': 'bad id\nwith a newline' },
    });
    expect(hostile.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const unauthorized = await app.inject({ method: 'GET', url: '/v1/turns' });
    expect(unauthorized.json().error.requestId).toBe(unauthorized.headers['x-request-id']);

    fake.enqueue({ content: [text('Logged.')] });
    const api = new ApiDriver(app);
    const sessionId = await api.createSession();
    const started = await app.inject({
      method: 'POST',
      url: `/v1/sessions/${sessionId}/turns`,
      headers: { ...authHeaders(), 'x-request-id': 'turn-start-7' },
      payload: { message: 'hi' },
    });
    expect(started.statusCode).toBe(202);
    const turnId = started.json().id;
    await api.finished(turnId);
    const history = await env.client.workflow.getHandle(turnId).fetchHistory();
    const input = history.events?.[0].workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
    expect(JSON.parse(Buffer.from(input!).toString())).toMatchObject({ turnId, requestId: 'turn-start-7' });
    const turnLines = await eventually(
      async () => workerLog.lines.filter((line) => line.workflowId === turnId),
      (lines) => lines.some((line) => line.msg === 'Workflow completed'),
    );
    // The SDK logs "Workflow started" before the turn's code reads its input; every line after carries the id.
    expect(turnLines.find((line) => line.msg === 'Workflow completed')).toMatchObject({
      service: 'skillflow-worker',
      level: 'debug',
      requestId: 'turn-start-7',
      workflowType: workflowTypes.turn,
    });
  });

  it('logs every 5xx at error level with its cause, whatever SKILLFLOW_LOG_REQUESTS says; requests only when it is 1', async () => {
    const failure = new Error('describe blew up', { cause: new Error('the root cause') });
    const broken = {
      workflow: { getHandle: () => ({ describe: () => Promise.reject(failure) }) },
      options: { namespace: 'default' },
    } as unknown as Client;
    const { app, log } = await appWith({}, broken);
    const response = await app.inject({
      method: 'GET',
      url: '/v1/turns/turn-0123456789abcdef0123-1',
      headers: authHeaders(),
    });
    expect(response.statusCode).toBe(500);
    const requestId = response.headers['x-request-id'];
    expect(response.json()).toEqual({
      error: { code: 'internal', message: 'Something went wrong on our side; it has been logged.', requestId },
    });
    expect(log).toEqual([
      expect.objectContaining({
        level: 'error',
        service: 'skillflow-api',
        requestId,
        msg: 'request failed',
        status: 500,
        err: expect.objectContaining({
          message: 'describe blew up',
          stack: expect.stringContaining('describe blew up'),
          cause: expect.objectContaining({ message: 'the root cause' }),
        }),
      }),
    ]);

    const { app: verbose, log: verboseLog } = await appWith({ SKILLFLOW_LOG_REQUESTS: '1' });
    await verbose.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'verbose-1' } });
    expect(verboseLog.map((line) => [line.level, line.msg, line.requestId])).toEqual([
      ['info', 'incoming request', 'verbose-1'],
      ['info', 'request completed', 'verbose-1'],
    ]);
  });

  it('API request metrics by route pattern and status, on their own port', async () => {
    const metrics = new ApiMetrics();
    const { app } = await appWith({}, env.client, { metrics });
    await app.inject({ method: 'GET', url: '/healthz' });
    await app.inject({ method: 'GET', url: '/v1/turns/turn-0123456789abcdef0123-1', headers: authHeaders() });
    await app.inject({ method: 'GET', url: '/v1/turns/turn-0123456789abcdef0123-2', headers: authHeaders() });
    const port = await freePort();
    const server = await serveMetrics(metrics.registry, port, '127.0.0.1');
    try {
      const response = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(response.headers.get('content-type')).toContain('text/plain');
      const body = await response.text();
      expect(body).toContain('skillflow_api_requests_total{method="GET",route="/healthz",status="200"} 1');
      expect(body).toContain('skillflow_api_requests_total{method="GET",route="/v1/turns/:id",status="404"} 2');
      expect(body).toMatch(
        /skillflow_api_request_duration_seconds_count\{method="GET",route="\/v1\/turns\/:id",status="404"\} 2/,
      );
      expect(body).toContain('skillflow_api_open_streams 0');
      expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
    } finally {
      server.close();
    }
  });

  it("the worker's Temporal metrics for Prometheus when SKILLFLOW_WORKER_METRICS_PORT is set", async () => {
    const body = await eventually(
      () => fetch(`http://127.0.0.1:${workerMetricsPort}/metrics`).then((response) => response.text()),
      (text) => text.includes('temporal_workflow_completed'),
    );
    expect(body).toMatch(/temporal_workflow_task_execution_latency/);
    expect(body).toMatch(new RegExp(`task_queue="${taskQueue}"`));
  });

  it('worker/main.ts started as deployed (scripts/worker.sh) at the default log level: JSON lines, the ready line npm start waits for, no warning about its memory settings', async () => {
    const port = await freePort();
    const child = spawn('sh', [path.join(root, 'scripts', 'worker.sh')], {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        NODE: process.execPath,
        TEMPORAL_ADDRESS: env.address,
        SKILLFLOW_TASK_QUEUE: env.newTaskQueue('main'),
        SKILLFLOW_DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'sf-worker-main-')),
        SKILLFLOW_WORKER_HEALTH_PORT: String(port),
        ANTHROPIC_BASE_URL: fake.url,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      await eventually(
        async () => output,
        (text) => text.includes(workerReadyMarker) || child.exitCode !== null,
        90_000,
      );
      const lines = output
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as LogLine);
      expect(lines.find((line) => line.msg.startsWith(workerReadyMarker))).toMatchObject({
        level: 'info',
        service: 'skillflow-worker',
      });
      // scripts/worker.sh gave the main thread the heap flags of SKILLFLOW_WORKER_HEAP_MB and set MALLOC_ARENA_MAX.
      expect(lines.filter((line) => /heap|MALLOC_ARENA_MAX/.test(line.msg)).map((line) => line.msg)).toEqual([]);
      expect(await (await fetch(`http://127.0.0.1:${port}/readyz`)).json()).toMatchObject({
        status: 'ready',
        worker: 'RUNNING',
        temporal: 'ok',
      });
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  }, 120_000);

  it('worker /healthz and /readyz: polling and connected', async () => {
    const port = await freePort();
    const probe = { state: 'INITIALIZED' as string, reachable: true };
    const server = await serveWorkerHealth(
      {
        worker: { getState: () => probe.state as never },
        connection: {
          withDeadline: (<T>(_deadline: number, fn: () => Promise<T>) => fn()) as never,
          workflowService: {
            getSystemInfo: () =>
              probe.reachable
                ? env.nativeConnection.workflowService.getSystemInfo({})
                : Promise.reject(new Error('down')),
          } as never,
        },
      },
      port,
      '127.0.0.1',
    );
    const get = async (path: string) => {
      const response = await fetch(`http://127.0.0.1:${port}${path}`);
      return [response.status, await response.json()];
    };
    try {
      expect(await get('/healthz')).toEqual([200, { status: 'ok', worker: 'INITIALIZED' }]);
      expect(await get('/readyz')).toEqual([
        503,
        { status: 'not_ready', worker: 'INITIALIZED', reason: 'the worker is not polling' },
      ]);
      probe.state = 'RUNNING';
      expect(await get('/readyz')).toEqual([200, { status: 'ready', worker: 'RUNNING', temporal: 'ok' }]);
      probe.reachable = false;
      expect(await get('/readyz')).toEqual([
        503,
        { status: 'not_ready', worker: 'RUNNING', temporal: 'unreachable', reason: 'Temporal does not answer' },
      ]);
      probe.state = 'FAILED';
      expect(await get('/healthz')).toEqual([503, { status: 'down', worker: 'FAILED' }]);
    } finally {
      server.close();
    }
  });
});
