import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { InProcessChannel } from '../lib/live';
import { aliceKey, authHeaders, buildTestApp } from './support/api';
import { bundledSkillsDir, testDeps } from './support/deps';
import { startFakeAnthropic, text, type FakeAnthropic } from './support/fake-anthropic';
import { ApiDriver } from './support/scenario';
import { SseClient } from './support/stream-clients';
import { TemporalTestEnv } from './support/temporal';
import { startTurn } from './support/turns';

const root = path.resolve(__dirname, '..');
/** A worker process bundles the workflow code when it starts, which takes tens of seconds on a loaded 2-core machine:
 * the tests that start one get the start-up's own deadline (90 s) on top of the suite's minute. */
const withWorkerProcess = 150_000;

/** SIGTERM and close: what a deploy or a scale-down does to a worker and an API process. */
describe('shutdown', () => {
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;

  beforeAll(async () => {
    env = await TemporalTestEnv.connect();
    fake = await startFakeAnthropic();
  });
  afterAll(async () => {
    await env?.close();
    await fake?.close();
  });
  beforeEach(() => {
    fake.requests.length = 0;
  });

  /** worker/main.ts as deployed (scripts/worker.sh, which execs node: signals reach the worker), with the given grace. */
  async function startWorkerProcess(
    taskQueue: string,
    graceMs: number,
  ): Promise<{ child: ChildProcess; output: () => string; exited: Promise<number | null> }> {
    const child = spawn('sh', ['scripts/worker.sh'], {
      cwd: root,
      env: {
        ...process.env,
        NODE: process.execPath,
        TEMPORAL_ADDRESS: env.address,
        SKILLFLOW_TASK_QUEUE: taskQueue,
        SKILLFLOW_DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'sf-shutdown-')),
        SKILLFLOW_SKILLS_DIR: bundledSkillsDir,
        ANTHROPIC_BASE_URL: fake.url,
        ANTHROPIC_API_KEY: 'test-key',
        SKILLFLOW_WORKER_SHUTDOWN_GRACE_MS: String(graceMs),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const deadline = Date.now() + 90_000;
    while (!output.includes('polling')) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`worker did not start:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return { child, output: () => output, exited };
  }

  /** `promise`, or an error naming `what` after 20 s. */
  async function step<T>(promise: Promise<T>, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>(
      (_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not settle within 20 s`)), 20_000)),
    );
    try {
      return await Promise.race([promise, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  async function firstRequest(): Promise<void> {
    const deadline = Date.now() + 20_000;
    while (fake.requests.length === 0) {
      if (Date.now() > deadline) throw new Error('no model request within 20 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it(
    'a worker given SIGTERM finishes the model call it is running within its grace, then exits',
    async () => {
      const taskQueue = env.newTaskQueue('shutdown-finish');
      const worker = await startWorkerProcess(taskQueue, 10_000);
      // About 2 s of streaming: well within the grace.
      fake.enqueue({ content: [text('Finished before the worker left.')], delayMs: 200 });
      const turn = await startTurn(env.client, taskQueue, 'hello');
      await firstRequest();
      worker.child.kill('SIGTERM');
      expect(await fake.requests[0].finished).toBe('completed');
      expect(await worker.exited).toBe(0);
      expect(worker.output()).toMatch(/SIGTERM: no new tasks; running activities get 10 s to finish/);
      // No worker polls the queue any more: the turn moves on once one does.
      await env.startWorker(taskQueue, testDeps(fake.url));
      expect(await turn.result()).toMatchObject({ status: 'completed', output: 'Finished before the worker left.' });
      expect(fake.requests).toHaveLength(1);
    },
    withWorkerProcess,
  );

  it(
    'a model call longer than the grace goes back to Temporal at once and another worker runs it, not after the heartbeat timeout',
    async () => {
      const taskQueue = env.newTaskQueue('shutdown-handback');
      const worker = await startWorkerProcess(taskQueue, 1_000);
      fake.enqueue(
        { content: [text('This answer takes far too long to stream.')], delayMs: 3_000 },
        { content: [text('Answered by the other worker.')] },
      );
      const turn = await startTurn(env.client, taskQueue, 'hello');
      await firstRequest();
      await env.startWorker(taskQueue, testDeps(fake.url));
      const stopped = Date.now();
      worker.child.kill('SIGTERM');
      expect(await worker.exited).toBe(0);
      expect(await turn.result()).toMatchObject({ status: 'completed', output: 'Answered by the other worker.' });
      // The call's heartbeat timeout is 60 s; handing it back gets it retried within seconds.
      expect(Date.now() - stopped).toBeLessThan(15_000);
      expect(fake.requests).toHaveLength(2);
      expect(await fake.requests[0].finished).toBe('aborted');
    },
    withWorkerProcess,
  );

  describe('the API', () => {
    let app: FastifyInstance;
    let base: string;
    const taskQueue = () => queue;
    let queue: string;

    beforeAll(async () => {
      queue = env.newTaskQueue('shutdown-api');
      await env.startWorker(queue, testDeps(fake.url));
    });

    beforeEach(async () => {
      ({ app } = await buildTestApp(
        env.client,
        taskQueue(),
        { SKILLFLOW_WAIT_TIMEOUT_MS: '30000' },
        { live: new InProcessChannel() },
      ));
      await app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    });
    afterEach(async () => {
      await app.close();
    });

    it('close answers a waiting ?wait=true request with 202 at once, ends its event streams, and refuses new connections', async () => {
      // The model call streams for about 20 s: the turn is running throughout.
      fake.enqueue({ content: [text('Slow answer.')], delayMs: 2_000 });
      const api = new ApiDriver(app);
      const sessionId = await api.createSession();
      const waiting = fetch(`${base}/v1/sessions/${sessionId}/turns?wait=true`, {
        method: 'POST',
        headers: { ...authHeaders(), 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'hello' }),
      });
      await firstRequest();
      const turnId = (await api.turn(`turn-${sessionId}-1`)).body.id as string;
      const stream = await SseClient.open(`${base}/v1/turns/${turnId}/events`, { authorization: `Bearer ${aliceKey}` });
      await stream.waitFor((event) => event.type === 'status');

      const started = Date.now();
      // Each step has a deadline of its own, so that a hang says which one it was (the test's 60 s names none).
      await step(app.close(), 'app.close()');
      expect(Date.now() - started).toBeLessThan(3_000);
      const response = await step(waiting, 'the ?wait=true response');
      expect(response.status).toBe(202);
      expect(await response.json()).toMatchObject({ id: turnId, status: 'running' });
      await step(stream.ended, 'the end of the SSE stream');
      expect(stream.comments).toContain('server shutting down');
      await expect(fetch(`${base}/healthz`)).rejects.toThrow();
      await env.client.workflow.getHandle(turnId).cancel();
    });

    it('close ends the keep-alive connection of a response sent while it closes, instead of waiting for its idle timeout', async () => {
      // A request still answering when the close begins (as a ?wait=true waiter is, when the close's abort finds it
      // reading the turn): Node closes the connections idle at that moment only, and Fastify keeps an idle one 72 s.
      let entered!: () => void;
      const inHandler = new Promise<void>((resolve) => (entered = resolve));
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const late = await buildTestApp(env.client, taskQueue(), {}, { live: new InProcessChannel() });
      late.app.get('/test/answer-late', async () => {
        entered();
        await released;
        return { answered: true };
      });
      // After the app's own preClose hooks: the close has begun when this runs.
      let closeBegan!: () => void;
      const closeBegins = new Promise<void>((resolve) => (closeBegan = resolve));
      late.app.addHook('preClose', async () => closeBegan());
      await late.app.listen({ port: 0, host: '127.0.0.1' });
      const agent = new http.Agent({ keepAlive: true });
      try {
        const response = new Promise<http.IncomingMessage>((resolve, reject) => {
          const request = http.get(
            {
              host: '127.0.0.1',
              port: (late.app.server.address() as AddressInfo).port,
              path: '/test/answer-late',
              agent,
              headers: authHeaders(),
            },
            (res) => {
              res.resume();
              res.on('end', () => resolve(res));
            },
          );
          request.on('error', reject);
        });
        await step(inHandler, 'the request reaching its handler');
        const closed = late.app.close();
        await step(closeBegins, 'the close to begin');
        release();
        expect((await step(response, 'the response')).headers.connection).toBe('close');
        await step(closed, 'app.close()');
      } finally {
        agent.destroy();
      }
    });
  });
});
