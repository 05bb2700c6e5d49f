import { workerPollers, workerSlots, workerTuning } from '../worker/tuning';

describe('the worker tuning from the configuration (worker/tuning.ts)', () => {
  it.each([
    [150, 40],
    [40, 40],
    [20, 20],
    [1, 2],
    [0, 40],
  ])('a cache of %i workflows runs at most %i workflow tasks at once', (cache, slots) => {
    expect(workerTuning({ workerMaxCachedWorkflows: cache, workerEagerActivities: 3 })).toMatchObject({
      maxCachedWorkflows: cache,
      maxConcurrentWorkflowTaskExecutions: slots,
    });
  });

  it('sets the activity slots, the pollers and the eager reservations', () => {
    expect(workerTuning({ workerMaxCachedWorkflows: 150, workerEagerActivities: 0 })).toMatchObject({
      maxEagerActivityReservationsPerWorkflowTask: 0,
      maxConcurrentActivityTaskExecutions: workerSlots.activities,
      workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: workerPollers.workflowTasks },
      activityTaskPollerBehavior: { type: 'simple-maximum', maximum: workerPollers.activities },
    });
  });
});
