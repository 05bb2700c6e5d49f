import type { WorkerOptions } from '@temporalio/worker';
import type { Config } from '../lib/config';

/**
 * Slots and pollers of the worker, set here rather than left to the SDK's defaults of the day: the values
 * docs/benchmarks.md measured (Worker tuning). A workflow task slot runs one task at a time on the worker's one workflow
 * thread, so more slots only queue more; an activity slot holds a model call while it streams, so 100 slots is how many
 * calls of different turns one worker streams at once.
 */
export const workerSlots = { workflowTasks: 40, activities: 100 } as const;
export const workerPollers = { workflowTasks: 10, activities: 10 } as const;

/**
 * The young generation of each V8 heap: V8's default lets each semi-space grow to 16 MB (32 MB committed per heap,
 * kept after a burst); 4 MB measured as much speed for 24 MB less per heap (docs/benchmarks.md, worker memory).
 */
export const workerSemiSpaceMb = 4;

/**
 * glibc malloc arenas of the worker process (MALLOC_ARENA_MAX): glibc's default on 64 bits is 8 per CPU, and the
 * threads of the Temporal core, of Node and of its thread pool each leave memory in theirs; 2 measured about 50 MB
 * less outside V8 at the same speed (docs/benchmarks.md). glibc reads it when the process starts, so whoever starts
 * the worker sets it (scripts/worker.sh); a value already in the environment wins.
 */
export const workerMallocArenas = 2;

/** V8's flags for the worker's heaps: the old-space limit (SKILLFLOW_WORKER_HEAP_MB; 0 leaves V8's) and the young generation. */
export function workerV8Flags(config: Pick<Config, 'workerHeapMb'>): string[] {
  return [
    `--max-semi-space-size=${workerSemiSpaceMb}`,
    ...(config.workerHeapMb > 0 ? [`--max-old-space-size=${config.workerHeapMb}`] : []),
  ];
}

/**
 * The most a heap started with `workerV8Flags` may hold, as `v8.getHeapStatistics().heap_size_limit` reports it: the
 * old-space limit plus three semi-spaces (two for the young generation, one for its large objects). Undefined when
 * the old space is V8's own.
 */
export function expectedHeapLimitMb(config: Pick<Config, 'workerHeapMb'>): number | undefined {
  return config.workerHeapMb > 0 ? config.workerHeapMb + 3 * workerSemiSpaceMb : undefined;
}

/** The worker options that come from the configuration and the measurements: cache, eager activities, slots, pollers. */
export function workerTuning(
  config: Pick<Config, 'workerMaxCachedWorkflows' | 'workerEagerActivities'>,
): Partial<WorkerOptions> {
  return {
    maxCachedWorkflows: config.workerMaxCachedWorkflows,
    maxEagerActivityReservationsPerWorkflowTask: config.workerEagerActivities,
    // The SDK lowers the workflow task slots to the cache size when the cache is smaller (and not 0), with a warning.
    maxConcurrentWorkflowTaskExecutions:
      config.workerMaxCachedWorkflows > 0
        ? Math.max(2, Math.min(workerSlots.workflowTasks, config.workerMaxCachedWorkflows))
        : workerSlots.workflowTasks,
    maxConcurrentActivityTaskExecutions: workerSlots.activities,
    workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: workerPollers.workflowTasks },
    activityTaskPollerBehavior: { type: 'simple-maximum', maximum: workerPollers.activities },
  };
}
