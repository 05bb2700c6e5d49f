import { parentPort, Worker } from 'node:worker_threads';

/**
 * A worker thread that answers requests with a TypeScript module's `answer` function, each request within a budget of
 * CPU time: work that takes too long (a quadratic pass, a loop that never ends) fails its test by the test's own
 * deadline, in seconds, not by Jest's. The worker is terminated when a request overruns, and started again for the
 * next one. CPU time, not wall time, so that a busy shared machine does not count against the code; the process's
 * CPU time is read, which is the worker's while this thread only waits for it. A wall-clock cap (generous) still ends
 * a request if the machine gives the worker almost no CPU at all. (test/support/budgeted-worker.ts runs one piece of
 * work with a wall-clock budget; this keeps one worker for many requests, each within CPU time.)
 */
export type Answer<T> = { kind: 'answered'; value: T } | { kind: 'over budget'; cpuMs: number; wallMs: number };

export interface Budget {
  cpuMs: number;
  wallMs: number;
}

const loadDeadlineMs = 60_000;
const pollMs = 50;
const tsxRegister = require.resolve('tsx/cjs/api');

export class CpuBudgetWorker<Request, Response> {
  private worker: Promise<Worker> | undefined;

  constructor(private readonly modulePath: string) {}

  async ask(request: Request, budget: Budget): Promise<Answer<Response>> {
    const worker = await this.started();
    const cpuAtStart = process.cpuUsage();
    const wallAtStart = performance.now();
    return new Promise<Answer<Response>>((resolve, reject) => {
      const settle = (answer: Answer<Response> | Error) => {
        clearInterval(poll);
        worker.off('message', onMessage);
        worker.off('error', settle);
        if (answer instanceof Error) {
          this.stop();
          reject(answer);
        } else {
          resolve(answer);
        }
      };
      const onMessage = (message: { value: Response } | { error: string }) =>
        settle(
          'error' in message
            ? new Error(`${this.modulePath} failed: ${message.error}`)
            : { kind: 'answered', value: message.value },
        );
      const poll = setInterval(() => {
        const { user, system } = process.cpuUsage(cpuAtStart);
        const cpuMs = (user + system) / 1000;
        const wallMs = performance.now() - wallAtStart;
        if (cpuMs <= budget.cpuMs && wallMs <= budget.wallMs) return;
        this.stop();
        settle({ kind: 'over budget', cpuMs: Math.round(cpuMs), wallMs: Math.round(wallMs) });
      }, pollMs);
      worker.on('message', onMessage);
      worker.once('error', settle);
      worker.postMessage(request);
    });
  }

  /** Ends the worker (a later `ask` starts another). */
  stop(): void {
    const worker = this.worker;
    this.worker = undefined;
    void worker?.then((w) => w.terminate());
  }

  private started(): Promise<Worker> {
    this.worker ??= new Promise<Worker>((resolve, reject) => {
      const source = `require(${JSON.stringify(tsxRegister)}).register(); require(${JSON.stringify(__filename)}).serve(${JSON.stringify(this.modulePath)});`;
      const worker = new Worker(source, { eval: true });
      worker.unref();
      const timer = setTimeout(() => {
        void worker.terminate();
        reject(new Error(`${this.modulePath} did not load in a worker within ${loadDeadlineMs} ms`));
      }, loadDeadlineMs);
      worker.once('message', () => {
        clearTimeout(timer);
        resolve(worker);
      });
      worker.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
    return this.worker;
  }
}

/** The worker's side: loads the module, says it is ready, then answers every request with its `answer` export. */
export function serve(modulePath: string): void {
  const port = parentPort!;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { answer } = require(modulePath) as { answer: (request: unknown) => unknown };
  port.on('message', (request: unknown) => {
    try {
      port.postMessage({ value: answer(request) });
    } catch (error) {
      port.postMessage({ error: String((error as Error)?.stack ?? error) });
    }
  });
  port.postMessage({ ready: true });
}
