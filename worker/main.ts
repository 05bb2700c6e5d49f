import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { loadConfig } from '../lib/config';
import { createWorkerLiveChannel, describeLiveChannel } from '../lib/live';
import { createWorker } from './create-worker';
import { modelDepsFrom } from './model-deps';
import { workerReadyMarker } from './ready';

async function main(): Promise<void> {
  const config = loadConfig();
  Runtime.install({ logger: new DefaultLogger(config.workerLogLevel) });
  if (!config.anthropicApiKey && !config.anthropicBaseUrl) {
    console.warn('[worker] ANTHROPIC_API_KEY is not set: model calls will fail until you set it (see .env.example).');
  }
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  const live = createWorkerLiveChannel(config, (line) => console.log(`[worker] ${line}`));
  try {
    const worker = await createWorker({
      connection,
      namespace: config.temporalNamespace,
      taskQueue: config.taskQueue,
      deps: { model: modelDepsFrom(config, live), skills: { skillsDir: config.skillsDir, dataDir: config.dataDir } },
      publishLive: (turnId, event) => live.publish(turnId, event),
    });
    const running = worker.run();
    console.log(`[worker] ${workerReadyMarker}: task queue "${config.taskQueue}" on ${config.temporalAddress} (namespace ${config.temporalNamespace})`);
    console.log(`[worker] live events go to ${describeLiveChannel(config)}`);
    await running;
  } finally {
    await live.close();
    await connection.close();
  }
}

main().catch((err) => {
  console.error('[worker] fatal:', err instanceof Error ? err.message : err);
  process.exit(1);
});
