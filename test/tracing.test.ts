import { Client } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry/lib/client';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { FastifyInstance } from 'fastify';
import { startTracing, type Tracing } from '../lib/tracing';
import { workflowTypes } from '../workflows/definitions';
import { createWorker } from '../worker/create-worker';
import { authHeaders, buildTestApp, eventually } from './support/api';
import { testDeps } from './support/deps';
import { startFakeAnthropic, text, type FakeAnthropic } from './support/fake-anthropic';
import { ApiDriver } from './support/scenario';
import { TemporalTestEnv } from './support/temporal';

/**
 * OpenTelemetry through @temporalio/interceptors-opentelemetry, with an in-memory exporter: one trace runs from the
 * API's `POST /v1/sessions/:id/turns` through the session's update and the turn workflow to the `callModel` activity.
 * The worker bundles its workflows itself here, with the tracing interceptor modules (worker/create-worker.ts).
 */
describe('tracing', () => {
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing;
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let app: FastifyInstance;
  let stopWorker: () => Promise<void>;

  beforeAll(async () => {
    tracing = startTracing('skillflow-test', exporter, { immediate: true });
    env = await TemporalTestEnv.connect();
    fake = await startFakeAnthropic();
    const taskQueue = env.newTaskQueue('traced');
    const worker = await createWorker({
      connection: env.nativeConnection,
      namespace: 'default',
      taskQueue,
      deps: testDeps(fake.url),
      tracing,
    });
    const running = worker.run();
    stopWorker = async () => {
      worker.shutdown();
      await running;
    };
    const client = new Client({
      connection: env.connection,
      interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
    });
    ({ app } = await buildTestApp(client, taskQueue, {}, { tracer: tracing.tracer }));
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await stopWorker?.();
    await env?.close();
    await fake?.close();
    await tracing?.shutdown();
  });

  it('follows one turn from the HTTP request through the workflows to the model call, in one trace', async () => {
    fake.enqueue({ content: [text('Traced.')] });
    const api = new ApiDriver(app);
    const sessionId = await api.createSession();
    const started = await app.inject({
      method: 'POST',
      url: `/v1/sessions/${sessionId}/turns`,
      headers: authHeaders(),
      payload: { message: 'trace me' },
    });
    expect(started.statusCode).toBe(202);
    await api.finished(started.json().id);

    const named = (spans: ReadableSpan[], name: string) => spans.find((span) => span.name === name);
    const runTurn = `RunWorkflow:${workflowTypes.turn}`;
    const spans = await eventually(
      async () => exporter.getFinishedSpans(),
      (all) => ['RunActivity:callModel', runTurn, 'HandleUpdate:startTurn'].every((name) => named(all, name)),
      30_000,
    );
    const http = named(spans, 'POST /v1/sessions/:id/turns')!;
    expect(http).toBeDefined();
    expect(http.attributes).toMatchObject({ 'http.route': '/v1/sessions/:id/turns', 'http.response.status_code': 202 });
    const traceId = http.spanContext().traceId;
    const chain = [
      'StartWorkflowUpdate:startTurn',
      'HandleUpdate:startTurn',
      `StartChildWorkflow:${workflowTypes.turn}`,
      runTurn,
      'StartActivity:callModel',
      'RunActivity:callModel',
    ];
    for (const name of chain) {
      expect({ name, traceId: named(spans, name)?.spanContext().traceId }).toEqual({ name, traceId });
    }
    // Each link's parent is the one before it, down from the HTTP request's span.
    const parentOf = (name: string) => named(spans, name)!.parentSpanId;
    expect(parentOf('StartWorkflowUpdate:startTurn')).toBe(http.spanContext().spanId);
    expect(parentOf('RunActivity:callModel')).toBe(named(spans, 'StartActivity:callModel')!.spanContext().spanId);
  }, 60_000);
});
