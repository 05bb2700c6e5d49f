/** The worker's own timings, from the Temporal SDK's Prometheus metrics (histograms in milliseconds). */

const histograms = {
  wftScheduleToStart: 'temporal_workflow_task_schedule_to_start_latency',
  wftExecution: 'temporal_workflow_task_execution_latency',
  activityScheduleToStart: 'temporal_activity_schedule_to_start_latency',
  activityExecution: 'temporal_activity_execution_latency',
} as const;

type Name = keyof typeof histograms;
export type MetricsSnapshot = Record<Name, { sum: number; count: number }>;
export type WorkerTimings = Record<Name, { meanMs: number; count: number }>;

/** Sums and counts of the histograms, over all their labels. */
export async function scrapeWorkerMetrics(url: string): Promise<MetricsSnapshot> {
  const text = await (await fetch(url)).text();
  const snapshot = {} as MetricsSnapshot;
  for (const [key, metric] of Object.entries(histograms) as Array<[Name, string]>) {
    const total = (suffix: string) =>
      text
        .split('\n')
        .filter((line) => line.startsWith(`${metric}${suffix}{`) || line.startsWith(`${metric}${suffix} `))
        .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
    snapshot[key] = { sum: total('_sum'), count: total('_count') };
  }
  return snapshot;
}

export function timingsBetween(before: MetricsSnapshot, after: MetricsSnapshot): WorkerTimings {
  const timings = {} as WorkerTimings;
  for (const key of Object.keys(histograms) as Name[]) {
    const count = after[key].count - before[key].count;
    timings[key] = { meanMs: count > 0 ? (after[key].sum - before[key].sum) / count : Number.NaN, count };
  }
  return timings;
}
