import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { loadConfig } from '../lib/config';
import { createWorkerLiveChannel, describeLiveChannel } from '../lib/live';
import { createSharedStore, sweepPeriodically } from '../lib/store';
import { createWorker } from './create-worker';
import { modelDepsFrom } from './model-deps';
import { workerReadyMarker } from './ready';

/** How often a worker removes idle turns from the file or PostgreSQL store (Redis expires them itself). */
const sweepEveryMs = 3_600_000;

async function main(): Promise<void> {
  const config = loadConfig();
  const say = (line: string) => console.log(`[worker] ${line}`);
  // Signals are handled below, so the shutdown can be logged and given its grace.
  Runtime.install({ logger: new DefaultLogger(config.workerLogLevel), shutdownSignals: [] });
  if (!config.anthropicApiKey && !config.anthropicBaseUrl) {
    console.warn('[worker] ANTHROPIC_API_KEY is not set: model calls will fail until you set it (see .env.example).');
  }
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  const live = createWorkerLiveChannel(config, say);
  const store = createSharedStore(config);
  const stopSweeping = sweepPeriodically(store, sweepEveryMs, say);
  let worker: Worker | undefined;
  const shutdown = (signal: string) => {
    if (!worker) {
      say(`${signal} during start-up: exiting`);
      process.exit(0);
    }
    if (worker.getState() !== 'RUNNING') return;
    say(`${signal}: no new tasks; running activities get ${config.workerShutdownGraceMs / 1000} s to finish, then go back to Temporal for another worker`);
    worker.shutdown();
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGQUIT'] as const) process.on(signal, () => shutdown(signal));
  try {
    worker = await createWorker({
      connection,
      namespace: config.temporalNamespace,
      taskQueue: config.taskQueue,
      deps: { model: modelDepsFrom(config, live, store, say), skills: { skillsDir: config.skillsDir, dataDir: config.dataDir } },
      publishLive: (turnId, event) => live.publish(turnId, event),
      overrides: {
        shutdownGraceTime: config.workerShutdownGraceMs,
        // A worker that still has not stopped well after its grace gives up rather than hang its container.
        shutdownForceTime: config.workerShutdownGraceMs + 15_000,
      },
    });
    const running = worker.run();
    say(`${workerReadyMarker}: task queue "${config.taskQueue}" on ${config.temporalAddress} (namespace ${config.temporalNamespace})`);
    say(`live events go to ${describeLiveChannel(config)}; transcripts are shared through ${store.description}`);
    await running;
    say('stopped');
  } finally {
    stopSweeping();
    await Promise.all([live.close(), store.close()]);
    await connection.close();
  }
}

main().catch((err) => {
  console.error('[worker] fatal:', err instanceof Error ? err.message : err);
  process.exit(1);
});
