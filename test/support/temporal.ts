import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, DefaultLogger, type Worker, type WorkerOptions } from '@temporalio/worker';
import type { ActivityDeps } from '../../activities';
import { createWorker, type CreateWorkerOptions } from '../../worker/create-worker';

let runtimeInstalled = false;

/** How `TemporalTestEnv.startWorker` runs a worker besides its activities. */
export interface StartWorkerOptions {
  overrides?: Partial<WorkerOptions>;
  ownConnection?: boolean;
  workflowBundlePath?: string;
  publishState?: CreateWorkerOptions['publishState'];
}

/** A connection to the suite's dev server, a client, and workers on task queues of their own. */
export class TemporalTestEnv {
  private readonly workers: Array<{ worker: Worker; running: Promise<void>; connection?: NativeConnection }> = [];

  private constructor(
    readonly address: string,
    readonly connection: Connection,
    readonly nativeConnection: NativeConnection,
    readonly client: Client,
  ) {}

  /** `installRuntime` replaces the quiet default Temporal runtime of this test file (logs, metrics); `address`, another server. */
  static async connect(options: { installRuntime?: () => void; address?: string } = {}): Promise<TemporalTestEnv> {
    const address = options.address ?? process.env.SKILLFLOW_TEST_TEMPORAL_ADDRESS;
    if (!address)
      throw new Error('No test Temporal server: run the suite with `npm test` (or unset SKILLFLOW_TEST_NO_TEMPORAL).');
    if (!runtimeInstalled) {
      (options.installRuntime ?? (() => Runtime.install({ logger: new DefaultLogger('ERROR') })))();
      runtimeInstalled = true;
    }
    const connection = await Connection.connect({ address });
    const nativeConnection = await NativeConnection.connect({ address });
    return new TemporalTestEnv(address, connection, nativeConnection, new Client({ connection }));
  }

  newTaskQueue(prefix = 'test'): string {
    return `${prefix}-${randomUUID()}`;
  }

  /** A worker with the suite's bundle of the current workflow code, or with `workflowBundlePath` (a frozen one). */
  async startWorker(
    taskQueue: string,
    deps: ActivityDeps,
    publishLive?: CreateWorkerOptions['publishLive'],
    options: StartWorkerOptions = {},
  ): Promise<Worker> {
    // The SDK refuses two workers of one task queue on one connection: several workers of a queue need their own.
    const connection = options.ownConnection ? await NativeConnection.connect({ address: this.address }) : undefined;
    const worker = await createWorker({
      connection: connection ?? this.nativeConnection,
      namespace: 'default',
      taskQueue,
      deps,
      publishLive,
      publishState: options.publishState,
      workflowBundle: { codePath: options.workflowBundlePath ?? process.env.SKILLFLOW_TEST_WORKFLOW_BUNDLE! },
      overrides: { shutdownGraceTime: '2s', ...options.overrides },
    });
    const running = worker.run();
    this.workers.push({ worker, running, connection });
    return worker;
  }

  async stopWorker(worker: Worker): Promise<void> {
    const index = this.workers.findIndex((entry) => entry.worker === worker);
    if (index < 0) return;
    const [{ running, connection }] = this.workers.splice(index, 1);
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
    await connection?.close();
  }

  async close(): Promise<void> {
    for (const { worker } of [...this.workers]) await this.stopWorker(worker);
    await this.nativeConnection.close();
    await this.connection.close();
  }
}
