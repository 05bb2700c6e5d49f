import v8 from 'node:v8';
import type { Config } from '../lib/config';
import type { Logger } from '../lib/logging';
import { expectedHeapLimitMb, workerMallocArenas, workerV8Flags } from './tuning';

const mb = 1024 * 1024;

/** Share of its limit a heap may hold before the worker warns. */
export const heapWarnShare = 0.85;
const heapCheckEveryMs = 30_000;
/** After a warning, the next comes only this much later (while the heap stays high). */
const heapWarnEveryMs = 600_000;

/**
 * V8's flags of the worker's memory (worker/tuning.ts), for the isolates this process creates from now on: the SDK's
 * workflow thread is created after this. The main thread's heap was sized when the process started: only its command
 * line sets it (scripts/worker.sh), so the start-up lines say when it was not.
 */
export function applyWorkerHeapFlags(config: Pick<Config, 'workerHeapMb'>, logger: Logger): void {
  for (const flag of workerV8Flags(config)) v8.setFlagsFromString(flag);
  const expected = expectedHeapLimitMb(config);
  const actual = Math.round(v8.getHeapStatistics().heap_size_limit / mb);
  if (expected !== undefined && actual !== expected) {
    logger.warn(
      `the worker's main-thread heap has a limit of ${actual} MB, not the ${expected} MB of SKILLFLOW_WORKER_HEAP_MB=${config.workerHeapMb}: ` +
        `it was started without node ${workerV8Flags(config).join(' ')} (a value in .env only does not reach scripts/worker.sh). Start it with scripts/worker.sh and the setting in its environment.`,
    );
  }
  if (process.env.MALLOC_ARENA_MAX === undefined) {
    logger.warn(
      `MALLOC_ARENA_MAX is not set: glibc may keep up to 8 malloc arenas per CPU. scripts/worker.sh sets ${workerMallocArenas}.`,
    );
  }
}

/** What a heap of `usedBytes` out of `limitBytes` calls for: a warning line, or nothing. */
export function heapVerdict(usedBytes: number, limitBytes: number): string | undefined {
  if (usedBytes < limitBytes * heapWarnShare) return undefined;
  return (
    `the worker's main-thread heap holds ${Math.round(usedBytes / mb)} MB of its ${Math.round(limitBytes / mb)} MB limit: ` +
    'a worker whose heap reaches its limit crashes. Raise SKILLFLOW_WORKER_HEAP_MB or lower SKILLFLOW_WORKER_MAX_CACHED_WORKFLOWS (docs/benchmarks.md, worker memory).'
  );
}

/** Checks the main thread's heap every 30 s and warns near its limit; returns the stop. */
export function watchMainHeap(logger: Logger): () => void {
  let lastWarnAt = -Infinity;
  const timer = setInterval(() => {
    const { used_heap_size: used, heap_size_limit: limit } = v8.getHeapStatistics();
    const warning = heapVerdict(used, limit);
    if (!warning || Date.now() - lastWarnAt < heapWarnEveryMs) return;
    lastWarnAt = Date.now();
    logger.warn(warning);
  }, heapCheckEveryMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** The fix to print with a fatal error, when the error says a heap ran out (the workflow thread's ends the worker so). */
export function heapFixFor(message: string): string | undefined {
  if (!/out of memory|heap limit/i.test(message)) return undefined;
  return 'a heap of the worker reached its limit: raise SKILLFLOW_WORKER_HEAP_MB, or lower SKILLFLOW_WORKER_MAX_CACHED_WORKFLOWS (docs/benchmarks.md, worker memory).';
}
