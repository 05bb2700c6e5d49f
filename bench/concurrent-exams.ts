import { performance } from 'node:perf_hooks';
import { examMessage, examModelCalls } from '../test/support/exam-script';
import { requestsByExam } from './exam-requests';
import { followExam } from './exam-turn';
import { ProcessSampler } from './process-sampler';
import { emptySide, gapsOf } from './rounds';
import { inWaves } from './scenario';
import type { Stack } from './stack';
import { cpuOfPid, mb, ms, percentile } from './stats';
import { GaugeSampler, type GaugeSummary } from './worker-gauges';
import { scrapeWorkerMetrics, timingsBetween, type WorkerTimings } from './worker-metrics';
import type { WorkerProcess } from './worker-process';

/**
 * Rounds per second with many exams at once (issue 15): `exams` exams of `questions` questions (every question a
 * checkpoint) all started together through the API of a worker process of their own (bench/worker-process.ts), the
 * fake model answering at once, the client answering each checkpoint as soon as it hears of it. The sessions are
 * created first, not timed. A round's times are those of bench/rounds.ts, now under this load.
 */
export interface ConcurrentExamsResult {
  exams: number;
  questions: number;
  cacheSize: number;
  wallMs: number;
  modelCalls: number;
  expectedModelCalls: number;
  answers: number;
  /** Response fully written → the next request of that exam, after responses that ask no human, ms. */
  toolRounds: number[];
  /** Answer POSTed → the next request of that exam, ms. */
  resumes: number[];
  worker: WorkerTimings;
  gauges: GaugeSummary;
  rss: { before: number; peak: number; after: number };
  cpuSeconds: { worker: number; bench: number; temporal: number };
  /** The worker's main thread and its busiest other thread (the workflow thread), CPU s. */
  workerThreads: { main: number; busiestOther: number };
  failed: string[];
}

export async function measureConcurrentExams(
  stack: Stack,
  worker: WorkerProcess,
  exams: number,
  questions: number,
  first: number,
): Promise<ConcurrentExamsResult> {
  const failed: string[] = [];
  const sessions = await inWaves(exams, 10, () => worker.client.createSession());
  const from = stack.fake.requests.length;
  const answeredAt: number[][] = sessions.map(() => []);
  const metricsBefore = await scrapeWorkerMetrics(worker.metricsUrl);
  const gauges = new GaugeSampler(worker.metricsUrl);
  const workerSampler = new ProcessSampler(worker.pid);
  const benchCpu = process.cpuUsage();
  const temporalCpu = cpuOfPid(stack.devServer.process.pid);
  const started = performance.now();
  await Promise.all(
    sessions.map(async (sessionId, i) => {
      try {
        const turnId = await worker.client.startTurn(sessionId, examMessage(questions, first + i));
        await followExam(worker.client, turnId, answeredAt[i]);
      } catch (err) {
        failed.push(`exam ${first + i}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }),
  );
  const wallMs = performance.now() - started;
  const benchUsed = process.cpuUsage(benchCpu);
  const { after, peak, cpuSeconds, threads } = workerSampler.stop();
  const gaugeSummary = await gauges.stop();
  const timings = timingsBetween(metricsBefore, await scrapeWorkerMetrics(worker.metricsUrl));

  const side = emptySide();
  const byExam = requestsByExam(stack.fake.requests.slice(from), first, exams);
  byExam.forEach((requests, i) => {
    if (requests.length !== examModelCalls(questions))
      failed.push(`exam ${first + i}: ${requests.length}/${examModelCalls(questions)} model calls`);
    gapsOf(requests, answeredAt[i], side);
  });
  return {
    exams,
    questions,
    cacheSize: worker.cacheSize,
    wallMs,
    modelCalls: byExam.reduce((sum, requests) => sum + requests.length, 0),
    expectedModelCalls: exams * examModelCalls(questions),
    answers: answeredAt.reduce((sum, answers) => sum + answers.length, 0),
    toolRounds: side.toolRounds,
    resumes: side.resumes,
    worker: timings,
    gauges: gaugeSummary,
    rss: { before: workerSampler.before, peak, after },
    cpuSeconds: {
      worker: cpuSeconds,
      bench: (benchUsed.user + benchUsed.system) / 1e6,
      temporal: cpuOfPid(stack.devServer.process.pid) - temporalCpu,
    },
    workerThreads: threads,
    failed,
  };
}

const pair = (values: number[]) => `${ms(percentile(values, 50))} / ${ms(percentile(values, 95))} (${values.length})`;
const mean = ({ meanMs, count }: { meanMs: number; count: number }) =>
  `${Number.isFinite(meanMs) ? meanMs.toFixed(1) : '-'} ms (${count})`;
const slots = ({ max, mean: average, of }: { max: number; mean: number; of: number }) =>
  `${max} / ${Number.isFinite(average) ? average.toFixed(1) : '-'} of ${of}`;

export function concurrentExamsTable(r: ConcurrentExamsResult): string {
  const seconds = r.wallMs / 1000;
  const g = r.gauges;
  const perCall = (cpuSeconds: number) =>
    Number.isFinite(cpuSeconds) && r.modelCalls > 0 ? ((cpuSeconds * 1000) / r.modelCalls).toFixed(1) : '-';
  return [
    `${r.exams} exams of ${r.questions} questions started at once through the API of a worker process of their own ` +
      `(workflow cache ${r.cacheSize}), the fake answering at once; ${r.modelCalls}/${r.expectedModelCalls} model calls and ` +
      `${r.answers} checkpoint answers in ${seconds.toFixed(1)} s.`,
    '',
    '| measure | value | target |',
    '|---|--:|--:|',
    `| model rounds per second | ${(r.modelCalls / seconds).toFixed(1)} | ≥ 50 |`,
    `| checkpoint answers per second | ${(r.answers / seconds).toFixed(1)} | |`,
    `| engine time per tool round under this load, p50 / p95 ms (n) | ${pair(r.toolRounds)} | |`,
    `| checkpoint resume under this load, p50 / p95 ms (n) | ${pair(r.resumes)} | |`,
    `| workflow task slots in use, most / mean of the samples (of) | ${slots(g.workflowSlots)} | |`,
    `| activity slots in use, most / mean of the samples (of) | ${slots(g.activitySlots)} | |`,
    `| workflow cache: most workflows cached; evictions, hits, misses | ${g.cachedWorkflows.max}; ${g.evictions}, ${g.cacheHits}, ${g.cacheMisses} | |`,
    `| workflow task schedule → start, execution (SDK mean, count) | ${mean(r.worker.wftScheduleToStart)}, ${mean(r.worker.wftExecution)} | |`,
    `| activity schedule → start, execution (SDK mean, count) | ${mean(r.worker.activityScheduleToStart)}, ${mean(r.worker.activityExecution)} | |`,
    `| worker RSS MB before → after (peak) | ${mb(r.rss.before)} → ${mb(r.rss.after)} (${mb(r.rss.peak)}) | |`,
    `| CPU s: worker / bench process (API, fake, client) / Temporal | ${r.cpuSeconds.worker.toFixed(1)} / ${r.cpuSeconds.bench.toFixed(1)} / ${r.cpuSeconds.temporal.toFixed(1)} | |`,
    `| worker CPU ms per model call: all / main thread / workflow thread (its busiest other thread) | ${perCall(r.cpuSeconds.worker)} / ${perCall(r.workerThreads.main)} / ${perCall(r.workerThreads.busiestOther)} | |`,
  ].join('\n');
}
