import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { createWorker } from '../../worker/create-worker';
import { testDeps } from './deps';

/**
 * A test worker in a process of its own, so that a test can kill it whatever it holds: two activity slots, the
 * suite's workflow bundle, the fake model at SKILLFLOW_TEST_FAKE_URL, and http_fetch (the root turn's only tool) on
 * SKILLFLOW_TEST_FETCH_HOSTS within SKILLFLOW_TEST_FETCH_TIMEOUT_MS. Prints `ready` once it polls, `in-flight N`
 * whenever its number of running activities changes, and `stopped` when it has stopped (on SIGTERM).
 */
async function main(): Promise<void> {
  const env = (name: string) => process.env[name] ?? (process.exit(2) as never);
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const connection = await NativeConnection.connect({ address: env('SKILLFLOW_TEST_TEMPORAL_ADDRESS') });
  const httpFetch = {
    hosts: env('SKILLFLOW_TEST_FETCH_HOSTS').split(','),
    maxBytes: 1024,
    timeoutMs: Number(env('SKILLFLOW_TEST_FETCH_TIMEOUT_MS')),
  };
  const worker = await createWorker({
    connection,
    namespace: 'default',
    taskQueue: env('SKILLFLOW_TEST_TASK_QUEUE'),
    deps: testDeps(env('SKILLFLOW_TEST_FAKE_URL'), { httpFetch, rootGrants: ['http_fetch'] }),
    workflowBundle: { codePath: env('SKILLFLOW_TEST_WORKFLOW_BUNDLE') },
    overrides: { shutdownGraceTime: '2s', maxConcurrentActivityTaskExecutions: 2 },
  });
  process.on('SIGTERM', () => worker.shutdown());
  let inFlight = -1;
  const watching = setInterval(() => {
    const now = worker.getStatus().numInFlightActivities;
    if (now !== inFlight) console.log(`in-flight ${(inFlight = now)}`);
  }, 10);
  const running = worker.run();
  console.log('ready');
  await running;
  clearInterval(watching);
  await connection.close();
  console.log('stopped');
}

main().catch((err) => {
  console.error('few-slots worker failed:', err);
  process.exit(1);
});
