import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../activities';

export interface CreateWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  /** A pre-built bundle (tests bundle once); otherwise the workflows folder is bundled at start-up. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Extra worker options, e.g. a smaller cache in tests. */
  overrides?: Partial<WorkerOptions>;
}

export const workflowsPath = require.resolve('../workflows');

export async function createWorker(options: CreateWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    activities: createActivities(options.deps),
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath }),
    // Heartbeats carry cancellation to a streaming model call: send them often enough that a cancel lands in seconds.
    maxHeartbeatThrottleInterval: '2s',
    ...options.overrides,
  });
}
