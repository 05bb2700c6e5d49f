import { NativeConnection, Worker, type InjectedSinks, type WorkerOptions } from '@temporalio/worker';
import type { LogAppendedEvent } from '../lib/live';
import type { TurnSinks } from '../workflows/sinks';
import { createActivities, type ActivityDeps } from '../activities';

export interface CreateWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  /** A pre-built bundle (tests bundle once); otherwise the workflows folder is bundled at start-up. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Where the turn's live hints go (the live channel); absent drops them. */
  publishLive?: (turnId: string, event: LogAppendedEvent) => void;
  /** Extra worker options, e.g. a smaller cache in tests. */
  overrides?: Partial<WorkerOptions>;
}

function liveSinks(publish: CreateWorkerOptions['publishLive']): InjectedSinks<TurnSinks> {
  return {
    live: {
      logAppended: {
        fn: (_info, turnId, offset) => publish?.(turnId, { type: 'log.appended', offset }),
        callDuringReplay: false,
      },
    },
  };
}

export const workflowsPath = require.resolve('../workflows');

export async function createWorker(options: CreateWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    activities: createActivities(options.deps),
    sinks: liveSinks(options.publishLive),
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath }),
    // Heartbeats carry cancellation to a streaming model call: send them often enough that a cancel lands in seconds.
    maxHeartbeatThrottleInterval: '2s',
    ...options.overrides,
  });
}
