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

/** The worker options that come from the configuration and the measurements: cache, eager activities, slots, pollers. */
export function workerTuning(config: Pick<Config, 'workerMaxCachedWorkflows' | 'workerEagerActivities'>): Partial<WorkerOptions> {
  return {
    maxCachedWorkflows: config.workerMaxCachedWorkflows,
    maxEagerActivityReservationsPerWorkflowTask: config.workerEagerActivities,
    // The SDK lowers the workflow task slots to the cache size when the cache is smaller (and not 0), with a warning.
    maxConcurrentWorkflowTaskExecutions:
      config.workerMaxCachedWorkflows > 0 ? Math.max(2, Math.min(workerSlots.workflowTasks, config.workerMaxCachedWorkflows)) : workerSlots.workflowTasks,
    maxConcurrentActivityTaskExecutions: workerSlots.activities,
    workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: workerPollers.workflowTasks },
    activityTaskPollerBehavior: { type: 'simple-maximum', maximum: workerPollers.activities },
  };
}
