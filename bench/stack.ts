import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../api/app';
import { loadConfig } from '../lib/config';
import { freePort, startDevServer, type DevServer } from '../lib/dev-server';
import { InProcessChannel } from '../lib/live';
import { FileStore, type SharedStore } from '../lib/store';
import { obtainTemporalCli, userCacheDir } from '../lib/temporal-cli';
import { examModel, examRoundOf } from '../test/support/exam-script';
import { countingInterceptor } from '../test/support/rpc-counter';
import { startFakeAnthropic, type FakeAnthropic } from '../test/support/fake-anthropic';
import { withWorkflowCodeTarget } from '../worker/bundle-target';
import { createWorker, workflowsPath } from '../worker/create-worker';
import { livePublisher } from '../worker/model-deps';
import { benchModel } from './model-script';
import { builtinTools } from '../lib/tools/builtin';
import { ToolRegistry } from '../lib/tools/registry';

/** Everything a benchmark run needs, started here and stopped by `stop()`: nothing is installed or left behind. */
export interface Stack {
  apiUrl: string;
  apiKey: string;
  fake: FakeAnthropic;
  /** Sets the fake's pause between stream events for exams (the rounds measurement has the model answer at once). */
  setExamDelay(ms: number): void;
  /** The run's own temporary folder (removed by `stop()`). */
  dataDir: string;
  devServer: DevServer;
  /** A Temporal client of the benchmark's own, on a connection of its own (not counted in apiRpcs). */
  probeClient: Client;
  /** gRPC calls the API made to Temporal, by method name. */
  apiRpcs: Map<string, number>;
  /** The worker's Prometheus metrics. */
  metricsUrl: string;
  /** Rejects if the worker stops on its own. */
  workerRunning: Promise<void>;
  /** Starts another worker on the same task queue and store (its own connection); stopped by `stop()`. */
  addWorker(identity: string): Promise<void>;
  stop(): Promise<void>;
}

const repoRoot = path.resolve(__dirname, '..');
export const benchApiKey = 'bench-key-0123456789abcdef';
/** Streams the bench's one API key may hold open: every turn or exam a scenario has in flight, and the watchers. */
export const benchStreamsPerKey = 1_000_000;

const quietLogger = { log() {}, info() {}, warn() {}, debug() {}, trace() {}, error: console.error };

export async function startStack(chunkDelayMs: number, log: (line: string) => void): Promise<Stack> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-bench-'));
  const stops: Array<() => Promise<unknown>> = [async () => fs.rmSync(dir, { recursive: true, force: true })];
  const stop = async () => {
    for (const step of stops.splice(0).reverse()) await step().catch((err: unknown) => log(`cleanup: ${String(err)}`));
  };
  try {
    const cli = await obtainTemporalCli(userCacheDir(), log);
    const address = `127.0.0.1:${await freePort()}`;
    log(`Temporal CLI ${cli.path} (${cli.source}); dev server on ${address}; bundling the workflows...`);
    const [devServer, bundle] = await Promise.all([
      startDevServer({ cli: cli.path, address, namespace: 'default', logFile: path.join(dir, 'temporal.log') }),
      bundleWorkflowCode({ workflowsPath, logger: quietLogger, webpackConfigHook: withWorkflowCodeTarget }),
    ]);
    // Should this process exit before stop() has run, the dev server must not outlive it.
    const killDevServer = () => devServer.process.kill('SIGKILL');
    process.once('exit', killDevServer);
    stops.push(async () => process.off('exit', killDevServer));
    stops.push(() => devServer.stop());

    const fake = await startFakeAnthropic({ promptCache: {} });
    const bench = benchModel(chunkDelayMs);
    const examOptions = { delayMs: chunkDelayMs };
    const exams = examModel(examOptions);
    fake.respond((body, request) => (examRoundOf(body) ? exams(body, request) : bench(body, request)));
    stops.push(() => fake.close());

    const metricsAddress = `127.0.0.1:${await freePort()}`;
    Runtime.install({
      logger: new DefaultLogger('ERROR'),
      telemetryOptions: { metrics: { prometheus: { bindAddress: metricsAddress } } },
    });
    const taskQueue = `bench-${randomUUID()}`;
    const live = new InProcessChannel();
    // Every worker shares conversations through the store, as `npm start` and a deployment do.
    const store: SharedStore = new FileStore(path.join(dir, 'store'), 3_600_000);
    const startWorker = async (identity: string) => {
      const nativeConnection = await NativeConnection.connect({ address });
      stops.push(() => nativeConnection.close());
      const worker: Worker = await createWorker({
        connection: nativeConnection,
        namespace: 'default',
        taskQueue,
        deps: {
          model: {
            apiKey: 'bench-model-key',
            baseURL: fake.url,
            model: 'claude-bench',
            maxTokens: 1024,
            timeoutMs: 60_000,
            publishDelta: livePublisher(live),
            store,
          },
          skills: { skillsDir: path.join(repoRoot, 'skills'), dataDir: path.join(dir, 'data') },
          tools: { registry: new ToolRegistry(builtinTools()) },
        },
        workflowBundle: { code: bundle.code },
        publishLive: (turnId, event) => live.publish(turnId, event),
        publishState: (turnId, snapshot) => live.publishState(turnId, snapshot),
        overrides: { shutdownGraceTime: '2s', identity },
      });
      const running = worker.run();
      stops.push(async () => {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running.catch(() => undefined);
      });
      return { running };
    };
    const { running: workerRunning } = await startWorker('bench-worker-1');

    const apiRpcs = new Map<string, number>();
    const connection = await Connection.connect({
      address,
      interceptors: [countingInterceptor(apiRpcs), makeGrpcRetryInterceptor(defaultGrpcRetryOptions())],
    });
    stops.push(() => connection.close());
    const probeConnection = await Connection.connect({ address });
    stops.push(() => probeConnection.close());
    // Only what the benchmark must set: every other setting, the rate limit included, keeps its default. The daily token
    // quota is off: the fake reports prompt tokens as the API would (tens of thousands a round in a long exam), and one
    // run's hundreds of rounds for the one bench user would exhaust the default 5,000,000.
    const config = loadConfig({
      TEMPORAL_ADDRESS: address,
      SKILLFLOW_TASK_QUEUE: taskQueue,
      SKILLFLOW_API_KEYS: `${benchApiKey}=bench`,
      SKILLFLOW_DATA_DIR: dir,
      SKILLFLOW_USER_DAILY_TOKENS: '0',
      // The one bench key and user stand for many users, each with a session and following a turn (BENCH_CONCURRENCY
      // turns at once, 101 streams on one turn in the watchers measurement): the per-user cap of 32 streams would refuse
      // the rest (429 too_many_streams), and the cap of 100 open sessions a user the sessions after the hundredth of the
      // run (429 too_many_sessions). The per-process cap (SKILLFLOW_MAX_STREAMS) keeps its default.
      SKILLFLOW_MAX_STREAMS_PER_KEY: String(benchStreamsPerKey),
      SKILLFLOW_MAX_SESSIONS_PER_USER: '0',
    });
    const app: FastifyInstance = await buildApp({
      client: new Client({ connection }),
      config,
      apiKeys: config.apiKeys,
      live,
    });
    stops.push(() => app.close());
    const apiUrl = await app.listen({ host: '127.0.0.1', port: 0 });
    log(
      `API ${apiUrl}, worker on task queue ${taskQueue}, fake model ${fake.url} (${chunkDelayMs} ms between stream events)`,
    );
    const addWorker = async (identity: string) => {
      await startWorker(identity);
    };
    const setExamDelay = (ms: number) => {
      examOptions.delayMs = ms;
    };
    return {
      apiUrl,
      apiKey: benchApiKey,
      fake,
      setExamDelay,
      dataDir: dir,
      devServer,
      probeClient: new Client({ connection: probeConnection }),
      apiRpcs,
      metricsUrl: `http://${metricsAddress}/metrics`,
      workerRunning,
      addWorker,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
