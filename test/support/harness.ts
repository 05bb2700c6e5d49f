import { testDeps, type TestDepsOptions } from './deps';
import { startFakeAnthropic, type FakeAnthropic } from './fake-anthropic';
import { TemporalTestEnv, type StartWorkerOptions } from './temporal';

export interface Harness {
  env: TemporalTestEnv;
  fake: FakeAnthropic;
  taskQueue: string;
  /**
   * Closes `close` (an API app, say) after the file's tests and before the harness closes its connection: Jest runs a
   * file's afterAll hooks in the order they were declared, so an afterAll declared after useWorkerHarness runs after
   * the connection closed, and whatever the app still does in the background (a sweep, a feed's read) retries on a
   * shut-down channel until its hook times out.
   */
  closeFirst(close: () => Promise<unknown>): void;
}

/**
 * The usual test set-up: a connection to the suite's dev server, a scripted fake model, and a worker on a task queue
 * of its own, torn down after the file. Each test starts with an empty script and request log, and must use up what
 * it scripted.
 */
export interface HarnessOptions {
  skillsDir?: () => string;
  deps?: () => TestDepsOptions;
  /** The worker's own options (e.g. `{ overrides: { maxCachedWorkflows: 0 } }`). */
  worker?: () => StartWorkerOptions;
}

export function useWorkerHarness(prefix: string, options: HarnessOptions = {}): Harness {
  const closers: Array<() => Promise<unknown>> = [];
  const harness = { closeFirst: (close) => void closers.push(close) } as Harness;
  beforeAll(async () => {
    harness.env = await TemporalTestEnv.connect();
    harness.fake = await startFakeAnthropic();
    harness.taskQueue = harness.env.newTaskQueue(prefix);
    await harness.env.startWorker(
      harness.taskQueue,
      testDeps(harness.fake.url, { skillsDir: options.skillsDir?.(), ...options.deps?.() }),
      undefined,
      options.worker?.(),
    );
  });
  afterAll(async () => {
    // A closer that fails must not keep the others, the worker or the connection open (as separate hooks did not).
    const failures: unknown[] = [];
    for (const close of closers.splice(0)) await close().catch((error: unknown) => failures.push(error));
    await harness.env?.close();
    await harness.fake?.close();
    if (failures.length > 0)
      throw failures.length === 1 ? failures[0] : new AggregateError(failures, 'closeFirst: closers failed');
  });
  beforeEach(() => {
    harness.fake.respond(undefined);
    harness.fake.requests.length = 0;
  });
  afterEach(() => expect(harness.fake.pending).toBe(0));
  return harness;
}
