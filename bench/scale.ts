import { concurrentExamsTable, measureConcurrentExams } from './concurrent-exams';
import { measurePausedExams, pausedExamsTable } from './paused-exams';
import { setting } from './settings';
import type { Stack } from './stack';
import { startWorkerProcess, type WorkerProcess } from './worker-process';

/**
 * The scale scenarios, each on a fresh worker process of its own (bench/worker-process.ts) so that its
 * figures are the worker's: rounds per second with many exams at once, then many exams paused at a checkpoint.
 * 0 exams skips a scenario.
 */
export interface ScaleSettings {
  concurrentExams: number;
  concurrentQuestions: number;
  pausedExams: number;
  pausedQuestions: number;
  pausedInFlight: number;
  /** Characters each paused exam's message is padded to (0: not padded): long conversations in the worker's cache. */
  pausedMessageChars: number;
}

export function scaleSettings(): ScaleSettings {
  return {
    concurrentExams: setting('BENCH_CONCURRENT_EXAMS', 50),
    concurrentQuestions: setting('BENCH_CONCURRENT_QUESTIONS', 8),
    pausedExams: setting('BENCH_PAUSED_EXAMS', 1000),
    pausedQuestions: setting('BENCH_PAUSED_QUESTIONS', 1),
    pausedInFlight: Math.max(1, setting('BENCH_PAUSED_IN_FLIGHT', 50)),
    pausedMessageChars: setting('BENCH_PAUSED_MESSAGE_CHARS', 0),
  };
}

export interface ScaleResult {
  /** Markdown, for the console and the run's section. */
  section: string;
  failed: string[];
}

async function withWorker<T>(
  stack: Stack,
  signal: AbortSignal,
  log: (line: string) => void,
  run: (worker: WorkerProcess) => Promise<T>,
): Promise<T> {
  const worker = await startWorkerProcess(stack, signal, log);
  try {
    return await run(worker);
  } finally {
    await worker.stop();
  }
}

export async function measureScale(
  stack: Stack,
  settings: ScaleSettings,
  signal: AbortSignal,
  log: (line: string) => void,
): Promise<ScaleResult> {
  const parts: string[] = [];
  const failed: string[] = [];
  // Exams answered at once: the fake's pause between stream events would measure the fake, not the engine.
  stack.setExamDelay(0);
  const { concurrentExams: exams, concurrentQuestions: questions } = settings;
  if (exams > 0) {
    log(`rounds per second: ${exams} exams of ${questions} questions at once on a worker process of their own...`);
    const r = await withWorker(stack, signal, log, (worker) =>
      measureConcurrentExams(stack, worker, exams, questions, 10_000),
    );
    log(`  ${((r.modelCalls / r.wallMs) * 1000).toFixed(1)} model rounds/s, ${r.failed.length} problems`);
    parts.push(`#### Rounds per second, ${exams} exams at once\n\n${concurrentExamsTable(r)}`);
    failed.push(...r.failed.map((problem) => `concurrent exams: ${problem}`));
  }
  if (settings.pausedExams > 0) {
    log(`paused exams: ${settings.pausedExams} exams left at a checkpoint on a worker process of their own...`);
    const r = await withWorker(stack, signal, log, (worker) =>
      measurePausedExams(
        stack,
        worker,
        {
          exams: settings.pausedExams,
          questions: settings.pausedQuestions,
          inFlight: settings.pausedInFlight,
          messageChars: settings.pausedMessageChars,
          first: 20_000,
        },
        signal,
        log,
      ),
    );
    log(`  ${r.completed}/${r.exams} completed, ${r.failed.length} problems`);
    parts.push(`#### ${settings.pausedExams} exams paused at a checkpoint\n\n${pausedExamsTable(r)}`);
    failed.push(...r.failed.slice(0, 5).map((problem) => `paused exams: ${problem}`));
    if (r.failed.length > 5) failed.push(`paused exams: ${r.failed.length - 5} more problems`);
  }
  return { section: parts.join('\n\n'), failed };
}
