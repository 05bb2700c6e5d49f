import path from 'node:path';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { loadConfig } from '../../lib/config';
import { createWorkerLiveChannel } from '../../lib/live';
import { buildToolRegistry } from '../../lib/tools/build';
import { createWorker } from '../../worker/create-worker';
import { modelDepsFrom } from '../../worker/model-deps';

/**
 * A worker in a process of its own, wired like worker/main.ts (configuration from the environment, the live channel
 * of lib/live, modelDepsFrom) but with the suite's pre-built workflow bundle. Prints `ready` once it polls; stops on
 * SIGTERM.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  const live = createWorkerLiveChannel(config, (line) => console.log(`[live] ${line}`));
  const tools = await buildToolRegistry(config, (line) => console.log(`[tools] ${line}`));
  const worker = await createWorker({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    deps: {
      model: modelDepsFrom(config, live),
      skills: { skillsDir: config.skillsDir, dataDir: path.join(config.dataDir, 'worker') },
      tools: { registry: tools.registry },
    },
    workflowBundle: { codePath: process.env.SKILLFLOW_TEST_WORKFLOW_BUNDLE! },
    publishLive: (turnId, event) => live.publish(turnId, event),
    publishState: (turnId, snapshot) => live.publishState(turnId, snapshot),
    overrides: { shutdownGraceTime: '1s' },
  });
  process.on('SIGTERM', () => worker.shutdown());
  const running = worker.run();
  console.log('ready');
  await running;
  await live.close();
  await tools.close();
  await connection.close();
}

main().catch((err) => {
  console.error('live worker failed:', err);
  process.exit(1);
});
