import { performance } from 'node:perf_hooks';
import { searchAttributeNameOf } from '../core/search-attributes';
import { examMessage, examModelCalls } from '../test/support/exam-script';
import { requestsByExam } from './exam-requests';
import { followExam } from './exam-turn';
import { ProcessSampler } from './process-sampler';
import { inWaves } from './scenario';
import type { Stack } from './stack';
import { mb, rssOfPid } from './stats';
import { GaugeSampler, type GaugeReading, type GaugeSummary } from './worker-gauges';
import type { WorkerProcess } from './worker-process';

/**
 * Many exams paused at a checkpoint at once (issue 15): `exams` exam turns of `questions` questions started through
 * the API of a worker process of its own (bench/worker-process.ts), `inFlight` requests at a time, each left waiting at
 * its first checkpoint (`exam_params`) with nobody answering. Paused means the workflow has recorded the checkpoint
 * in its search attributes, which Temporal's visibility counts without asking the worker. Then the worker's RSS with
 * them all paused, and then every exam is followed on its stream and answered to its end, `inFlight` at a time.
 */
export interface PausedExamsResult {
  exams: number;
  questions: number;
  inFlight: number;
  /** What each exam's message was padded to (0: not padded). */
  messageChars: number;
  cacheSize: number;
  /** First POST → the last exam paused; answering the first → the last exam done. */
  pauseMs: number;
  resumeMs: number;
  rss: { before: number; paused: number; peak: number; after: number };
  /** The dev server's RSS with all exams paused. */
  temporalRss: number;
  /** The cache when all were paused, and over the whole scenario. */
  pausedGauges?: GaugeReading;
  gauges: GaugeSummary;
  completed: number;
  modelCalls: number;
  expectedModelCalls: number;
  workerCpuSeconds: number;
  failed: string[];
}

/** How long to wait for the exams to pause: the benchmark's own timeout stops it sooner when it is shorter. */
/** `message` followed by filler text up to `chars` characters (the API's message limits must allow them). */
function padded(message: string, chars: number): string {
  if (chars <= message.length) return message;
  const filler = ' Context for the exam: arrays, linked lists, hash maps, heaps, tries and balanced trees.';
  return (message + filler.repeat(Math.ceil((chars - message.length) / filler.length))).slice(0, chars);
}

const pauseDeadlineMs = (exams: number) => 60_000 + exams * 500;
const settleMs = 3_000;
const sleep = (msecs: number) => new Promise((resolve) => setTimeout(resolve, msecs));

async function waitUntilPaused(stack: Stack, worker: WorkerProcess, exams: number, signal: AbortSignal): Promise<void> {
  const query = `TaskQueue = '${worker.taskQueue}' AND ${searchAttributeNameOf.checkpoint} = 'exam_params' AND ExecutionStatus = 'Running'`;
  const deadline = performance.now() + pauseDeadlineMs(exams);
  for (;;) {
    signal.throwIfAborted();
    const { count } = await stack.probeClient.workflow.count(query);
    if (count >= exams) return;
    if (performance.now() > deadline)
      throw new Error(`${count} of ${exams} exams paused at exam_params after ${pauseDeadlineMs(exams)} ms`);
    await sleep(500);
  }
}

export async function measurePausedExams(
  stack: Stack,
  worker: WorkerProcess,
  settings: { exams: number; questions: number; inFlight: number; messageChars: number; first: number },
  signal: AbortSignal,
  log: (line: string) => void,
): Promise<PausedExamsResult> {
  const { exams, questions, inFlight, messageChars, first } = settings;
  const failed: string[] = [];
  const from = stack.fake.requests.length;
  const gauges = new GaugeSampler(worker.metricsUrl, 1_000);
  const workerSampler = new ProcessSampler(worker.pid);
  const started = performance.now();
  const turns = await inWaves(exams, inFlight, async (i) => {
    try {
      return await worker.client.startTurn(
        await worker.client.createSession(),
        padded(examMessage(questions, first + i), messageChars),
      );
    } catch (err) {
      failed.push(`exam ${first + i} did not start: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
  });
  log(
    `  ${turns.filter(Boolean).length} exams started in ${((performance.now() - started) / 1000).toFixed(1)} s; waiting for them to pause...`,
  );
  await waitUntilPaused(stack, worker, turns.filter(Boolean).length, signal);
  const pauseMs = performance.now() - started;
  await sleep(settleMs);
  const paused = workerSampler.now();
  const temporalRss = rssOfPid(stack.devServer.process.pid);
  const pausedGauges = await gauges.now().catch(() => undefined);
  log(
    `  all paused after ${(pauseMs / 1000).toFixed(1)} s: worker RSS ${mb(paused)} MB, ${pausedGauges?.cachedWorkflows ?? '?'} workflows cached; answering them...`,
  );

  const resumed = performance.now();
  const done = await inWaves(turns.length, inFlight, async (i) => {
    const turnId = turns[i];
    if (!turnId) return false;
    try {
      await followExam(worker.client, turnId);
      return true;
    } catch (err) {
      failed.push(`exam ${first + i}: ${err instanceof Error ? err.message : String(err)}`);
      return false;
    }
  });
  const resumeMs = performance.now() - resumed;
  await sleep(settleMs);
  const { after, peak, cpuSeconds } = workerSampler.stop();
  const gaugeSummary = await gauges.stop();

  const byExam = requestsByExam(stack.fake.requests.slice(from), first, exams);
  const wrong = byExam.filter((requests) => requests.length !== examModelCalls(questions)).length;
  if (wrong > 0) failed.push(`${wrong} exams did not make ${examModelCalls(questions)} model calls`);
  return {
    exams,
    questions,
    inFlight,
    messageChars,
    cacheSize: worker.cacheSize,
    pauseMs,
    resumeMs,
    rss: { before: workerSampler.before, paused, peak, after },
    temporalRss,
    pausedGauges,
    gauges: gaugeSummary,
    completed: done.filter(Boolean).length,
    modelCalls: byExam.reduce((sum, requests) => sum + requests.length, 0),
    expectedModelCalls: exams * examModelCalls(questions),
    workerCpuSeconds: cpuSeconds,
    failed,
  };
}

export function pausedExamsTable(r: PausedExamsResult): string {
  const g = r.gauges;
  return [
    `${r.exams} exams of ${r.questions} question(s)${r.messageChars > 0 ? `, their messages padded to ${r.messageChars.toLocaleString('en')} characters,` : ''} through the API of a worker process of their own (workflow cache ` +
      `${r.cacheSize}), ${r.inFlight} requests at a time, each left at its first checkpoint, then all answered to their end; ` +
      `${r.completed} of ${r.exams} completed, ${r.modelCalls}/${r.expectedModelCalls} model calls.`,
    '',
    '| measure | value | target |',
    '|---|--:|--:|',
    `| worker RSS MB: before, all paused, after all completed (peak) | ${mb(r.rss.before)}, ${mb(r.rss.paused)}, ${mb(r.rss.after)} (${mb(r.rss.peak)}) | paused ≤ 400 |`,
    `| workflows cached when all were paused; most over the scenario | ${r.pausedGauges?.cachedWorkflows ?? '?'}; ${g.cachedWorkflows.max} | |`,
    `| cache evictions, hits, misses over the scenario | ${g.evictions}, ${g.cacheHits}, ${g.cacheMisses} | |`,
    `| first POST → all paused, s | ${(r.pauseMs / 1000).toFixed(1)} | |`,
    `| first answer → all completed, s | ${(r.resumeMs / 1000).toFixed(1)} | |`,
    `| Temporal dev server RSS MB with all paused | ${mb(r.temporalRss)} | |`,
    `| worker CPU s over the scenario | ${r.workerCpuSeconds.toFixed(1)} | |`,
  ].join('\n');
}
