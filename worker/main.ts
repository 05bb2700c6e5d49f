import { NativeConnection, type Worker } from '@temporalio/worker';
import { loadConfig } from '../lib/config';
import { describeTemporalConnection } from '../lib/temporal-connection';
import { createTokenLedger } from '../lib/budget';
import { createWorkerLiveChannel, describeLiveChannel } from '../lib/live';
import { createLogger, opsLogOf } from '../lib/logging';
import { createSharedStore, sweepPeriodically } from '../lib/store';
import { buildToolRegistry } from '../lib/tools/build';
import { tracingFromConfig } from '../lib/tracing';
import { bundleWorkflowsApart } from './bundle-apart';
import { createWorker } from './create-worker';
import { applyWorkerHeapFlags, heapFixFor, watchMainHeap } from './heap';
import { serveWorkerHealth } from './health';
import { modelDepsFrom } from './model-deps';
import { workerReadyMarker } from './ready';
import { workerTuning } from './tuning';
import { installRuntime } from './runtime';

/** How often a worker removes idle turns from the file or PostgreSQL store (Redis expires them itself). */
const sweepEveryMs = 3_600_000;

async function main(): Promise<void> {
  const config = loadConfig();
  // The worker's own lines (start-up, the ready marker `npm start` waits for) at info or below; the SDK's at the setting.
  const logger = createLogger(
    'skillflow-worker',
    config.workerLogLevel === 'TRACE' || config.workerLogLevel === 'DEBUG'
      ? config.workerLogLevel.toLowerCase()
      : 'info',
  );
  const say = (line: string) => logger.info(line);
  for (const warning of config.warnings) logger.warn(warning);
  installRuntime(config, logger);
  // Before the SDK creates its workflow thread, whose heap these flags size.
  applyWorkerHeapFlags(config, logger);
  if (!config.anthropicApiKey && !config.anthropicBaseUrl) {
    logger.warn('ANTHROPIC_API_KEY is not set: model calls will fail until you set it (see .env.example).');
  }
  const tracing = tracingFromConfig(config, 'skillflow-worker');
  const connection = await NativeConnection.connect(config.temporal.connection);
  const live = createWorkerLiveChannel(config, opsLogOf(logger));
  const store = createSharedStore(config, opsLogOf(logger));
  const ledger = createTokenLedger(config, (line) => logger.warn(line));
  const stopSweeping = sweepPeriodically(store, sweepEveryMs, say);
  const tools = await buildToolRegistry(config, say);
  let worker: Worker | undefined;
  const startUp = new AbortController();
  const shutdown = (signal: string) => {
    if (!worker) {
      say(`${signal} during start-up: exiting`);
      // Kills the bundler, which would otherwise outlive this process.
      startUp.abort();
      process.exit(0);
    }
    if (worker.getState() !== 'RUNNING') return;
    say(
      `${signal}: no new tasks; running activities get ${config.workerShutdownGraceMs / 1000} s to finish, then go back to Temporal for another worker`,
    );
    worker.shutdown();
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGQUIT'] as const) process.on(signal, () => shutdown(signal));
  try {
    const code = await bundleWorkflowsApart(tracing !== undefined, { signal: startUp.signal });
    worker = await createWorker({
      connection,
      workflowBundle: { code },
      namespace: config.temporalNamespace,
      taskQueue: config.taskQueue,
      deps: {
        model: modelDepsFrom(config, live, store, say),
        skills: { skillsDir: config.skillsDir, dataDir: config.dataDir },
        tools: { registry: tools.registry },
        budget: { ledger },
      },
      publishLive: (turnId, event) => live.publish(turnId, event),
      publishState: (turnId, snapshot) => live.publishState(turnId, snapshot),
      tracing,
      overrides: {
        shutdownGraceTime: config.workerShutdownGraceMs,
        // A worker that still has not stopped well after its grace gives up rather than hang its container.
        shutdownForceTime: config.workerShutdownGraceMs + 15_000,
        ...workerTuning(config),
      },
    });
    const health =
      config.workerHealthPort > 0
        ? await serveWorkerHealth({ worker, connection }, config.workerHealthPort, config.host)
        : undefined;
    const running = worker.run();
    const stopHeapWatch = watchMainHeap(logger);
    // `npm start` waits for the marker in this line.
    say(`${workerReadyMarker}: task queue "${config.taskQueue}" on ${describeTemporalConnection(config.temporal)}`);
    say(
      `live events go to ${describeLiveChannel(config)}; transcripts are shared through ${store.description}; token budgets are reserved in ${ledger.description}`,
    );
    say(
      `tools: ${tools.registry.specs.map((tool) => tool.name).join(', ')}; with no skill active: ${config.defaultTools.join(' ') || "the engine's own only"}`,
    );
    if (health) say(`health on http://${config.host}:${config.workerHealthPort}/healthz and /readyz`);
    if (config.workerMetricsPort > 0)
      say(`Temporal metrics on http://${config.host}:${config.workerMetricsPort}/metrics`);
    if (tracing) say(`traces go to ${config.otlpEndpoint}`);
    try {
      await running;
    } finally {
      stopHeapWatch();
      health?.close();
    }
    say('stopped');
  } finally {
    stopSweeping();
    await Promise.all([live.close(), store.close(), tools.close(), ledger.close()]);
    await connection.close();
    await tracing?.shutdown();
  }
}

main().catch((err) => {
  const message = err instanceof Error ? err.message : String(err);
  const fix = heapFixFor(message);
  console.error('[worker] fatal:', message, ...(fix ? [`(${fix})`] : []));
  process.exit(1);
});
