import { performance } from 'node:perf_hooks';
import type { BenchClient } from './client';
import { TemporalProbe, type ProbeResult } from './probe';
import { modelCallsPerTurn, type TurnKind } from './model-script';
import type { Stack } from './stack';
import { percentile, Sampler, type MemorySample } from './stats';
import { runTurn, type TurnResult } from './turn';
import { scrapeWorkerMetrics, timingsBetween, type WorkerTimings } from './worker-metrics';

export interface ScenarioSpec {
  name: string;
  kind: TurnKind;
  turns: number;
  /** Turns in flight at once: 1 runs them one after the other. */
  concurrency: number;
}

export interface ScenarioResult extends ScenarioSpec {
  wallMs: number;
  turnsPerSec: number;
  latency: { p50: number; p95: number; max: number };
  /** p50 of POST → the workflow time on the terminal event: the turn's end inside Temporal. */
  endedP50: number;
  /** Terminal event received minus its workflow time, p50 and p95. */
  endLag: { p50: number; p95: number };
  /** checkpoint.requested received minus its workflow time, p50 and p95 (exam turns only). */
  checkpointLag: { p50: number; p95: number };
  /** POST of the message → 202, and POST of a checkpoint answer → 200: p50 and p95. */
  startRequest: { p50: number; p95: number };
  answerRequest: { p50: number; p95: number };
  cpuSeconds: { bench: number; temporal: number };
  probe: ProbeResult;
  worker: WorkerTimings;
  /** A turn of this scenario and its session, to look at their histories afterwards. */
  sample?: { turnId: string; sessionId: string };
  modelCalls: number;
  expectedModelCalls: number;
  errors: number;
  errorSamples: string[];
  memory: { before: MemorySample; after: MemorySample; peak: MemorySample };
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  /** gRPC calls the API made to Temporal during the measured part. */
  apiRpcs: Record<string, number>;
}

export async function inWaves<T>(count: number, concurrency: number, run: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, count) }, async () => {
    while (next < count) {
      const i = next++;
      results[i] = await run(i);
    }
  });
  await Promise.all(lanes);
  return results;
}

function sampleOf(results: TurnResult[], sessions: string[]): ScenarioResult['sample'] {
  const i = results.findIndex((r) => r.ok && r.turnId);
  return i < 0 ? undefined : { turnId: results[i].turnId as string, sessionId: sessions[i] };
}

/** Creates one session per turn first (not measured), then runs the turns and measures them. */
export async function runScenario(spec: ScenarioSpec, stack: Stack, client: BenchClient): Promise<ScenarioResult> {
  const sessions = await inWaves(spec.turns, 10, () => client.createSession());
  const callsBefore = stack.fake.requests.length;
  const rpcsBefore = new Map(stack.apiRpcs);
  const metricsBefore = await scrapeWorkerMetrics(stack.metricsUrl);
  const sampler = new Sampler(stack.devServer.process.pid);
  const inFlight = new Set<string>();
  const probe = new TemporalProbe(stack.probeClient, inFlight);
  const started = performance.now();
  const results: TurnResult[] = await inWaves(spec.turns, spec.concurrency, (i) =>
    runTurn(client, sessions[i], spec.kind, i + 1, inFlight),
  );
  const wallMs = performance.now() - started;
  const probed = await probe.stop();
  const worker = timingsBetween(metricsBefore, await scrapeWorkerMetrics(stack.metricsUrl));
  const { after, loopDelayP99Ms, loopDelayMaxMs, cpuSeconds } = sampler.stop();
  const apiRpcs: Record<string, number> = {};
  for (const [method, count] of stack.apiRpcs) {
    const delta = count - (rpcsBefore.get(method) ?? 0);
    if (delta > 0) apiRpcs[method] = delta;
  }
  const latencies = results.map((r) => r.latencyMs);
  const endLags = results.map((r) => r.endLagMs);
  const checkpointLags = results.flatMap((r) => r.checkpointLagsMs);
  const p50p95 = (values: number[]) => ({ p50: percentile(values, 50), p95: percentile(values, 95) });
  const failed = results.filter((r) => !r.ok);
  return {
    ...spec,
    wallMs,
    turnsPerSec: (spec.turns / wallMs) * 1000,
    latency: { p50: percentile(latencies, 50), p95: percentile(latencies, 95), max: percentile(latencies, 100) },
    endedP50: percentile(
      results.map((r) => r.endedMs),
      50,
    ),
    endLag: p50p95(endLags),
    checkpointLag: p50p95(checkpointLags),
    startRequest: p50p95(results.map((r) => r.startMs)),
    answerRequest: p50p95(results.flatMap((r) => r.answerMs)),
    cpuSeconds,
    probe: probed,
    worker,
    sample: sampleOf(results, sessions),
    modelCalls: stack.fake.requests.length - callsBefore,
    expectedModelCalls: spec.turns * modelCallsPerTurn[spec.kind],
    errors: failed.length,
    errorSamples: [...new Set(failed.map((r) => r.error ?? 'unknown'))].slice(0, 3),
    memory: { before: sampler.before, after, peak: sampler.peak },
    loopDelayP99Ms,
    loopDelayMaxMs,
    apiRpcs,
  };
}
