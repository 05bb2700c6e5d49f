import { parentPort, Worker, workerData } from 'node:worker_threads';

/**
 * Runs a TypeScript module in a worker thread and kills it when its work takes longer than `budgetMs`, so that code
 * that never settles fails its test by the test's own deadline, not by Jest's. The module posts `{ type: 'ready' }`
 * once loaded (loading has its own, longer deadline), then any `{ type: 'progress' }` messages, then `{ type: 'done',
 * value }`. The error of a run over budget lists the progress messages it got.
 */
export interface BudgetedRun<T> {
  value: T;
  /** From ready to done, measured on this thread. */
  ms: number;
}

const loadDeadlineMs = 30_000;
const tsxRegister = require.resolve('tsx/cjs/api');

export function runWithBudget<T>(file: string, workerData: unknown, budgetMs: number): Promise<BudgetedRun<T>> {
  const source = `require(${JSON.stringify(tsxRegister)}).register(); require(require('node:worker_threads').workerData.file);`;
  const worker = new Worker(source, { eval: true, workerData: { file, data: workerData } });
  const progress: unknown[] = [];
  return new Promise<BudgetedRun<T>>((resolve, reject) => {
    let readyAt = 0;
    const fail = (error: Error) => {
      clearTimeout(timer);
      void worker.terminate();
      reject(error);
    };
    let timer = setTimeout(() => fail(new Error(`${file} did not load within ${loadDeadlineMs} ms`)), loadDeadlineMs);
    worker.on(
      'message',
      (message: { type: 'ready' } | { type: 'progress'; value: unknown } | { type: 'done'; value: T }) => {
        if (message.type === 'ready') {
          readyAt = performance.now();
          clearTimeout(timer);
          timer = setTimeout(
            () =>
              fail(
                new Error(
                  `${file} did not finish within its budget of ${budgetMs} ms; it reported ${JSON.stringify(progress)}`,
                ),
              ),
            budgetMs,
          );
        } else if (message.type === 'progress') {
          progress.push(message.value);
        } else {
          const ms = performance.now() - readyAt;
          clearTimeout(timer);
          void worker.terminate();
          resolve({ value: message.value, ms });
        }
      },
    );
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`${file} exited (${code}) before it finished`)));
  });
}

/** For the worker module: its data, and how it reports. */
export function workerSide<D>(): {
  data: D;
  ready(): void;
  progress(value: unknown): void;
  done(value: unknown): void;
} {
  const post = (message: unknown) => parentPort!.postMessage(message);
  return {
    data: (workerData as { data: D }).data,
    ready: () => post({ type: 'ready' }),
    progress: (value) => post({ type: 'progress', value }),
    done: (value) => post({ type: 'done', value }),
  };
}
