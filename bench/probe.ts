import { performance } from 'node:perf_hooks';
import type { Client } from '@temporalio/client';
import { turnEventsQuery } from '../workflows/definitions';
import { percentile } from './stats';

export interface ProbeResult {
  query: { p50: number; p95: number; n: number };
  describe: { p50: number; p95: number; n: number };
}

/**
 * Times the two reads every SSE stream makes, against a turn in flight, four times a second and one at a time: the
 * `turnEvents` query (answered by the worker) and DescribeWorkflowExecution (answered by the server alone).
 */
export class TemporalProbe {
  private readonly queries: number[] = [];
  private readonly describes: number[] = [];
  private running = true;
  private readonly loop: Promise<void>;

  constructor(
    private readonly client: Client,
    private readonly inFlight: Set<string>,
  ) {
    this.loop = this.run();
  }

  private async time(into: number[], call: () => Promise<unknown>): Promise<void> {
    const started = performance.now();
    try {
      await call();
      into.push(performance.now() - started);
    } catch {
      // the turn ended between the pick and the call: not a sample
    }
  }

  private async run(): Promise<void> {
    while (this.running) {
      const turnId = [...this.inFlight][Math.floor(Math.random() * this.inFlight.size)];
      if (turnId) {
        const handle = this.client.workflow.getHandle(turnId);
        await this.time(this.queries, () => handle.query(turnEventsQuery, 0));
        await this.time(this.describes, () => handle.describe());
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  async stop(): Promise<ProbeResult> {
    this.running = false;
    await this.loop;
    const summary = (values: number[]) => ({
      p50: percentile(values, 50),
      p95: percentile(values, 95),
      n: values.length,
    });
    return { query: summary(this.queries), describe: summary(this.describes) };
  }
}
