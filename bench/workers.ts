import { examDecision, examMessage } from '../test/support/exam-script';
import { transcriptFigures, type TranscriptFigures } from '../test/support/transcript-figures';
import type { BenchClient } from './client';
import type { Stack } from './stack';

/**
 * One worker against three on the same task queue, sharing the transcript store: exams of `questions` questions (the
 * exam-script of the tests: every question is a checkpoint), `exams` of them at a time, then each turn's history read
 * back for its transcript misses and its size per round.
 */
export interface WorkersResult {
  workers: number;
  exams: number;
  questions: number;
  rounds: number;
  misses: number;
  wholeConversations: number;
  bytesPerRound: number;
  /** Model call attempts per worker, over all exams. */
  spread: Record<string, number>;
  failed: string[];
}

async function runExam(client: BenchClient, n: number, questions: number): Promise<string> {
  const sessionId = await client.createSession();
  const turnId = await client.startTurn(sessionId, examMessage(questions, n));
  const answers: Array<Promise<void>> = [];
  const terminal = await client.follow(turnId, (event) => {
    if (event.type !== 'checkpoint.requested') return;
    const checkpoint = event.checkpoint as { id: string; name: string; options?: string[] | null };
    answers.push(client.answer(turnId, checkpoint.id, { ...examDecision(checkpoint) }));
  });
  await Promise.all(answers);
  if (terminal.type !== 'done') throw new Error(`exam ${n} ended with ${JSON.stringify(terminal).slice(0, 200)}`);
  return turnId;
}

export async function measureWorkers(
  stack: Stack,
  client: BenchClient,
  workers: number,
  exams: number,
  questions: number,
  first: number,
): Promise<WorkersResult> {
  const failed: string[] = [];
  const turns = await Promise.all(
    Array.from({ length: exams }, (_, i) =>
      runExam(client, first + i, questions).catch((err: unknown) => void failed.push(String(err))),
    ),
  );
  const figures: TranscriptFigures[] = [];
  for (const turnId of turns) if (turnId) figures.push(await transcriptFigures(stack.probeClient, turnId));
  const sum = (pick: (f: TranscriptFigures) => number) => figures.reduce((total, f) => total + pick(f), 0);
  const spread: Record<string, number> = {};
  for (const f of figures)
    for (const [worker, count] of Object.entries(f.workers)) spread[worker] = (spread[worker] ?? 0) + count;
  return {
    workers,
    exams,
    questions,
    rounds: sum((f) => f.rounds),
    misses: sum((f) => f.misses),
    wholeConversations: sum((f) => f.wholeConversations),
    bytesPerRound:
      sum((f) => f.historyBytes) /
      Math.max(
        1,
        sum((f) => f.rounds),
      ),
    spread,
    failed,
  };
}

export function workersTable(results: WorkersResult[]): string {
  const base = results[0];
  return [
    '| workers | exams × questions | rounds | transcript misses | whole conversations sent | history per round | vs one worker | model calls per worker |',
    '|--:|--:|--:|--:|--:|--:|--:|---|',
    ...results.map(
      (r) =>
        `| ${r.workers} | ${r.exams} × ${r.questions} | ${r.rounds} | ${r.misses} | ${r.wholeConversations} | ${(r.bytesPerRound / 1024).toFixed(2)} KiB | ` +
        `${((r.bytesPerRound / base.bytesPerRound - 1) * 100).toFixed(1)}% | ${Object.entries(r.spread)
          .map(([w, n]) => `${w.replace('bench-', '')} ${n}`)
          .join(', ')} |`,
    ),
  ].join('\n');
}
