import { spawn, type ChildProcess } from 'node:child_process';
import type { WorkflowHandle } from '@temporalio/client';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';
import {
  startFakeAnthropic,
  text,
  toolUse,
  type FakeAnthropic,
  type MessagesRequestBody,
} from './support/fake-anthropic';
import { TemporalTestEnv } from './support/temporal';
import { resultOf, startTurn as startTurnOn } from './support/turns';

/**
 * Issue 24.1 on a real worker: http_fetch calls whose bodies stop after a few bytes end at the tool's limit and give
 * their activity slots back, and a worker asked to stop while one is in flight stops. The worker runs in a process of
 * its own (test/support/few-slots-worker-process.ts) with two activity slots, and each wait has a deadline: a call that
 * never ends holds its slot for good and keeps the worker from stopping, so the test kills the process rather than
 * wait for it.
 */
const stalledText = 'A body that stops after its first bytes. '.repeat(50);
const stalledStarts: Record<string, Buffer> = {
  gzip: zlib.gzipSync(stalledText).subarray(0, 12),
  br: zlib.brotliCompressSync(stalledText).subarray(0, 12),
  identity: Buffer.from(stalledText.slice(0, 12)),
};
const timeoutMs = 500;

const within = <T>(promise: Promise<T>, ms: number, what: string) =>
  new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} after ${ms} ms`)), ms);
    void promise.then(resolve, reject).finally(() => clearTimeout(timer));
  });

const resultsOf = (body: MessagesRequestBody) =>
  (body.messages.at(-1) as { content: Array<{ type: string; content?: string; is_error?: boolean }> }).content.filter(
    (block) => block.type === 'tool_result',
  );

/** The worker process's output lines, and a wait for the first line (from `from` on) that passes `test`. */
class Lines {
  readonly all: string[] = [];
  private waiters: Array<() => void> = [];

  constructor(child: ChildProcess) {
    let partial = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      const parts = (partial + chunk.toString()).split('\n');
      partial = parts.pop()!;
      this.all.push(...parts);
      for (const wake of this.waiters.splice(0)) wake();
    });
    child.stderr!.on('data', (chunk: Buffer) => this.all.push(chunk.toString()));
  }

  async next(test: (line: string) => boolean, from = 0): Promise<number> {
    for (;;) {
      const index = this.all.findIndex((line, at) => at >= from && test(line));
      if (index >= 0) return index;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }
}

describe('http_fetch with stalled bodies on a worker with two activity slots', () => {
  let server: http.Server;
  let port: number;
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let child: ChildProcess | undefined;
  let arrived: () => void = () => {};
  /** Every turn started: those a failure left running are terminated before the connection closes. */
  const turns: WorkflowHandle[] = [];
  const startTurn = async (queue: string, message: string) => {
    const handle = await startTurnOn(env.client, queue, message);
    turns.push(handle);
    return handle;
  };
  const stalledUrl = (encoding: string) => `http://127.0.0.1:${port}/stall/${encoding}`;

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      const encoding = /^\/stall\/(\w+)$/.exec(request.url ?? '')?.[1] ?? 'identity';
      response
        .writeHead(200, {
          'content-type': 'text/plain',
          ...(encoding === 'identity' ? {} : { 'content-encoding': encoding }),
        })
        .write(stalledStarts[encoding]);
      arrived();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    env = await TemporalTestEnv.connect();
    fake = await startFakeAnthropic();
  });
  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await Promise.allSettled(turns.map((handle) => handle.terminate()));
    await env?.close();
    await fake?.close();
  });

  it('each call ends at its limit and its slot comes back: a later turn runs, and the worker stops with a call in flight', async () => {
    const queue = env.newTaskQueue('http-fetch-slots');
    child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(__dirname, 'support', 'few-slots-worker-process.ts')],
      {
        env: {
          ...process.env,
          SKILLFLOW_TEST_TASK_QUEUE: queue,
          SKILLFLOW_TEST_FAKE_URL: fake.url,
          SKILLFLOW_TEST_FETCH_HOSTS: `127.0.0.1:${port}`,
          SKILLFLOW_TEST_FETCH_TIMEOUT_MS: String(timeoutMs),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const lines = new Lines(child);
    const exited = new Promise<number | null>((resolve) => child!.once('exit', resolve));
    await within(
      lines.next((line) => line === 'ready'),
      60_000,
      `the worker was not ready (${lines.all.join(' | ')})`,
    );

    const encodings = Object.keys(stalledStarts);
    fake.enqueue(
      { content: encodings.map((encoding) => toolUse('http_fetch', { url: stalledUrl(encoding) })) },
      { content: [text('Every page stalled.')] },
      { content: [text('Still here.')] },
      { content: [toolUse('http_fetch', { url: stalledUrl('gzip') })] },
    );
    const first = await within(
      resultOf(await startTurn(queue, 'fetch them')),
      20_000,
      'the turn with the stalled calls had not ended',
    );
    expect(first).toMatchObject({ status: 'completed', output: 'Every page stalled.' });
    expect(resultsOf(fake.requests[1].body)).toEqual(
      encodings.map((encoding) =>
        expect.objectContaining({
          is_error: true,
          content: `http_fetch gave up on ${stalledUrl(encoding)} after ${timeoutMs} ms.`,
        }),
      ),
    );
    // Nothing of the calls is left running on the worker, and its two slots serve the next turn.
    const lastInFlight = () => lines.all.filter((line) => line.startsWith('in-flight ')).at(-1);
    await within(
      lines.next((line) => line === 'in-flight 0' && line === lastInFlight()),
      5_000,
      `activities were still running (${lastInFlight()})`,
    );
    const second = await within(
      resultOf(await startTurn(queue, 'hello')),
      20_000,
      'the turn after the stalled calls had not ended',
    );
    expect(second).toMatchObject({ status: 'completed', output: 'Still here.' });

    // Asked to stop while a call waits on a stalled body, the worker stops (the call ends), without being killed.
    const requested = new Promise<void>((resolve) => (arrived = resolve));
    await startTurn(queue, 'fetch it again');
    await within(requested, 20_000, 'the stalled page had not been requested again');
    child.kill('SIGTERM');
    expect(await within(exited, 10_000, 'the worker had not stopped')).toBe(0);
    expect(lines.all).toContain('stopped');
  });
});
