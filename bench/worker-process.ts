import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { Client, Connection } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../api/app';
import { loadConfig } from '../lib/config';
import { freePort } from '../lib/dev-server';
import { createApiLiveChannel } from '../lib/live';
import { stopProcess } from '../lib/processes';
import { workerReadyMarker } from '../worker/ready';
import { BenchClient } from './client';
import { benchApiKey, benchStreamsPerKey, type Stack } from './stack';

/**
 * A worker of its own, as `npm run worker` runs it (worker/main.ts in a child process, configured from the
 * environment), so that its memory, CPU, slots and cache are the worker's alone. It polls a task queue of its own, and
 * an API in the benchmark process serves that queue, with the live channel `npm start` has between the two (the
 * local socket under the data dir). The fake model, the dev server and the probe client are the stack's.
 */
export interface WorkerProcess {
  pid: number;
  taskQueue: string;
  metricsUrl: string;
  client: BenchClient;
  /** The worker's settings that matter to the measurements, as its config read them. */
  cacheSize: number;
  stop(): Promise<void>;
}

const repoRoot = path.resolve(__dirname, '..');

/**
 * Settings the benchmark decides; the rest (SKILLFLOW_WORKER_MAX_CACHED_WORKFLOWS and the other tuning among them)
 * come from the benchmark's environment, as they would from a deployment's. Empty means unset, also over a .env file:
 * the live channel and the store must be the local ones.
 */
function workerEnv(stack: Stack, taskQueue: string, dataDir: string, metricsPort: number): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE: process.execPath,
    TEMPORAL_ADDRESS: stack.devServer.address,
    TEMPORAL_NAMESPACE: 'default',
    SKILLFLOW_TASK_QUEUE: taskQueue,
    SKILLFLOW_DATA_DIR: dataDir,
    SKILLFLOW_SKILLS_DIR: path.join(repoRoot, 'skills'),
    ANTHROPIC_API_KEY: 'bench-model-key',
    ANTHROPIC_BASE_URL: stack.fake.url,
    SKILLFLOW_WORKER_METRICS_PORT: String(metricsPort),
    SKILLFLOW_WORKER_HEALTH_PORT: '0',
    SKILLFLOW_WORKER_SHUTDOWN_GRACE_MS: '2000',
    SKILLFLOW_REDIS_URL: '',
    SKILLFLOW_STORE_URL: '',
    SKILLFLOW_LIVE_SOCKET: '',
    SKILLFLOW_MCP_CONFIG: '',
    OTEL_EXPORTER_OTLP_ENDPOINT: '',
    // Node's options for this worker only, to look into its memory (e.g. --report-on-signal). scripts/worker.sh's own
    // flags come after them and win: set the heap limit with SKILLFLOW_WORKER_HEAP_MB.
    ...(process.env.BENCH_WORKER_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_WORKER_NODE_OPTIONS } : {}),
  };
}

/**
 * Node's own arguments for the worker, space-separated, for what NODE_OPTIONS refuses: Node 20 rejects `--cpu-prof`
 * there, so `BENCH_WORKER_NODE_ARGS='--cpu-prof --cpu-prof-dir=DIR'` profiles the worker (each of its threads writes
 * a profile of its own when the worker stops).
 */
function workerNodeArgs(): string[] {
  return (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
}

/** Resolves once the worker prints its ready marker; rejects if it exits first or takes longer than `timeoutMs`. */
function ready(child: ChildProcess, logFile: string, timeoutMs: number): Promise<void> {
  const log = fs.createWriteStream(logFile);
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(new Error(`the worker did not print "${workerReadyMarker}" within ${timeoutMs} ms (log: ${logFile})`)),
      timeoutMs,
    );
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`the worker exited with ${code} before it was ready (log: ${logFile})`));
    };
    child.once('exit', onExit);
    for (const stream of [child.stdout, child.stderr]) {
      readline.createInterface({ input: stream! }).on('line', (line) => {
        log.write(`${line}\n`);
        if (!line.includes(workerReadyMarker)) return;
        clearTimeout(timer);
        child.off('exit', onExit);
        resolve();
      });
    }
  });
}

export async function startWorkerProcess(
  stack: Stack,
  signal: AbortSignal,
  log: (line: string) => void,
): Promise<WorkerProcess> {
  const taskQueue = `bench-worker-process-${randomUUID()}`;
  const dataDir = fs.mkdtempSync(path.join(stack.dataDir, 'wp-'));
  const stops: Array<() => Promise<unknown>> = [];
  const stop = async () => {
    for (const step of stops.splice(0).reverse()) await step().catch((err: unknown) => log(`cleanup: ${String(err)}`));
  };
  try {
    // The API's end of the live channel listens first, so the worker's publisher finds it.
    const config = loadConfig({
      TEMPORAL_ADDRESS: stack.devServer.address,
      SKILLFLOW_TASK_QUEUE: taskQueue,
      SKILLFLOW_API_KEYS: `${benchApiKey}=bench`,
      SKILLFLOW_DATA_DIR: dataDir,
      SKILLFLOW_USER_DAILY_TOKENS: '0',
      // One client stands for many users: it opens a session per exam (a thousand of them) and follows up to a scenario's
      // exams in flight at once on one API key.
      SKILLFLOW_MAX_SESSIONS_PER_USER: '0',
      SKILLFLOW_MAX_STREAMS_PER_KEY: String(benchStreamsPerKey),
      // Longer messages than the defaults allow (BENCH_PAUSED_MESSAGE_CHARS), when the benchmark's environment says so.
      ...Object.fromEntries(
        ['SKILLFLOW_MAX_MESSAGE_CHARS', 'SKILLFLOW_MAX_MESSAGE_BYTES', 'SKILLFLOW_BODY_LIMIT_BYTES'].flatMap((name) =>
          process.env[name] ? [[name, process.env[name]]] : [],
        ),
      ),
    });
    const live = await createApiLiveChannel(config, log);
    stops.push(() => live.close());
    const metricsPort = await freePort();
    // As `npm run worker` starts it: scripts/worker.sh, with the worker's memory settings (exec: the PID is node's);
    // the script passes its arguments to node, before the entry point.
    const child = spawn('sh', [path.join(repoRoot, 'scripts', 'worker.sh'), ...workerNodeArgs()], {
      cwd: repoRoot,
      env: workerEnv(stack, taskQueue, dataDir, metricsPort),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const killChild = () => child.kill('SIGKILL');
    process.once('exit', killChild);
    stops.push(async () => process.off('exit', killChild));
    stops.push(() => stopProcess(child, 10_000));
    // Bundling the workflows at start-up takes the worker tens of seconds on a busy machine.
    await ready(child, path.join(dataDir, 'worker.log'), 180_000);
    const connection = await Connection.connect({ address: stack.devServer.address });
    stops.push(() => connection.close());
    const app: FastifyInstance = await buildApp({
      client: new Client({ connection }),
      config,
      apiKeys: config.apiKeys,
      live,
    });
    stops.push(() => app.close());
    const apiUrl = await app.listen({ host: '127.0.0.1', port: 0 });
    const cacheSize = loadConfig(workerEnv(stack, taskQueue, dataDir, metricsPort)).workerMaxCachedWorkflows;
    log(`worker process ${child.pid} on task queue ${taskQueue} (cache ${cacheSize} workflows), its API ${apiUrl}`);
    return {
      pid: child.pid as number,
      taskQueue,
      metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
      client: new BenchClient(apiUrl, benchApiKey, signal),
      cacheSize,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
