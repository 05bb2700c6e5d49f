/**
 * The worker's slots and workflow cache, from the Temporal SDK's Prometheus gauges and counters, sampled while a
 * scenario runs: a gauge says only how things stand at the moment it is read.
 */

const gauges = {
  workflowSlotsUsed: ['temporal_worker_task_slots_used', 'WorkflowWorker'],
  workflowSlotsAvailable: ['temporal_worker_task_slots_available', 'WorkflowWorker'],
  activitySlotsUsed: ['temporal_worker_task_slots_used', 'ActivityWorker'],
  activitySlotsAvailable: ['temporal_worker_task_slots_available', 'ActivityWorker'],
  cachedWorkflows: ['temporal_sticky_cache_size', undefined],
} as const;

const counters = {
  evictions: 'temporal_sticky_cache_total_forced_eviction',
  cacheHits: 'temporal_sticky_cache_hit',
  cacheMisses: 'temporal_sticky_cache_miss',
} as const;

type Gauge = keyof typeof gauges;
type Counter = keyof typeof counters;
export type GaugeReading = Record<Gauge | Counter, number>;

/** Sum of a metric's samples (over all its labels, or those with `worker_type` given); NaN when it is absent. */
function sumOf(text: string, metric: string, workerType?: string): number {
  let found = false;
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${metric}{`) && !line.startsWith(`${metric}_total{`) && !line.startsWith(`${metric} `))
      continue;
    if (workerType && !line.includes(`worker_type="${workerType}"`)) continue;
    found = true;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return found ? total : Number.NaN;
}

export async function readWorkerGauges(url: string): Promise<GaugeReading> {
  const text = await (await fetch(url)).text();
  const reading = {} as GaugeReading;
  for (const [key, [metric, workerType]] of Object.entries(gauges) as Array<
    [Gauge, readonly [string, string | undefined]]
  >)
    reading[key] = sumOf(text, metric, workerType);
  for (const [key, metric] of Object.entries(counters) as Array<[Counter, string]>) reading[key] = sumOf(text, metric);
  return reading;
}

export interface GaugeSummary {
  /** Most slots in use at once, and their mean over the samples. */
  workflowSlots: { max: number; mean: number; of: number };
  activitySlots: { max: number; mean: number; of: number };
  cachedWorkflows: { max: number; last: number };
  /** Counter deltas over the sampling. */
  evictions: number;
  cacheHits: number;
  cacheMisses: number;
  samples: number;
}

/** Reads the gauges every `everyMs` until stopped; a failed read is skipped (the worker may be busy or stopping). */
export class GaugeSampler {
  private readonly readings: GaugeReading[] = [];
  private running = true;
  private readonly loop: Promise<void>;

  constructor(
    private readonly url: string,
    private readonly everyMs = 250,
  ) {
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    while (this.running) {
      const reading = await readWorkerGauges(this.url).catch(() => undefined);
      if (reading) this.readings.push(reading);
      await new Promise((resolve) => setTimeout(resolve, this.everyMs));
    }
  }

  /** The latest reading taken now, outside the sampling rhythm. */
  async now(): Promise<GaugeReading> {
    const reading = await readWorkerGauges(this.url);
    this.readings.push(reading);
    return reading;
  }

  async stop(): Promise<GaugeSummary> {
    this.running = false;
    await this.loop;
    await this.now().catch(() => undefined);
    return summarize(this.readings);
  }
}

const finite = (values: number[]) => values.filter(Number.isFinite);
const max = (values: number[]) => (finite(values).length > 0 ? Math.max(...finite(values)) : Number.NaN);
const mean = (values: number[]) =>
  finite(values).length > 0 ? finite(values).reduce((a, b) => a + b, 0) / finite(values).length : Number.NaN;

function summarize(readings: GaugeReading[]): GaugeSummary {
  const pick = (key: keyof GaugeReading) => readings.map((r) => r[key]);
  // A counter appears in the output only once it has counted something: absent is 0.
  const count = (reading: GaugeReading | undefined, key: Counter) =>
    reading && Number.isFinite(reading[key]) ? reading[key] : 0;
  const delta = (key: Counter) => count(readings.at(-1), key) - count(readings[0], key);
  const slots = (used: Gauge, available: Gauge) => ({
    max: max(pick(used)),
    mean: mean(pick(used)),
    // Used and available are two gauges read one after the other: their sum is the slot count only when idle, at the start.
    of: readings.length > 0 ? readings[0][used] + readings[0][available] : Number.NaN,
  });
  return {
    workflowSlots: slots('workflowSlotsUsed', 'workflowSlotsAvailable'),
    activitySlots: slots('activitySlotsUsed', 'activitySlotsAvailable'),
    cachedWorkflows: { max: max(pick('cachedWorkflows')), last: readings.at(-1)?.cachedWorkflows ?? Number.NaN },
    evictions: delta('evictions'),
    cacheHits: delta('cacheHits'),
    cacheMisses: delta('cacheMisses'),
    samples: readings.length,
  };
}
