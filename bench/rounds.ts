import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { humanApprovalToolName } from '../core/skills';
import { examMessage, examModelCalls } from '../test/support/exam-script';
import type { RecordedRequest } from '../test/support/fake-anthropic';
import { transcriptFigures } from '../test/support/transcript-figures';
import type { BenchClient } from './client';
import { followExam } from './exam-turn';
import { createInProcessLoop } from './in-process-loop';
import type { Stack } from './stack';
import { ms, percentile } from './stats';
import { scrapeWorkerMetrics, timingsBetween, type WorkerTimings } from './worker-metrics';

/**
 * The table: a model round in skillflow against the same round in a plain in-process loop (bench/in-process-loop.ts),
 * same fake model answering at once (no pause between stream events), same script, same tools. `exams` exams of
 * `questions` questions run one after the other through the API, then the same exams through the loop.
 *
 * - engine time per tool round: from the fake writing the last byte of a response whose tool calls need no human, to
 *   the next request of that conversation arriving at the fake (both stamped by the fake, in this process);
 * - checkpoint resume: from the client starting to POST its answer to the next request arriving at the fake;
 * - history per round: the turn's whole Temporal history (as stored) divided by its model calls;
 * - prompt-cache read ratio from the second round on: cache-read tokens over all prompt tokens, as the fake reports them
 *   (test/support/fake-prompt-cache.ts).
 */
export interface Side {
  /** Gaps after a response without a checkpoint, ms. */
  toolRounds: number[];
  /** Answer POSTed → next request, ms (skillflow only). */
  resumes: number[];
  modelCalls: number;
  cacheReadRatio: number;
  wallMs: number;
}

export interface RoundsResult {
  exams: number;
  questions: number;
  engine: Side & { historyBytesPerRound: number[]; worker: WorkerTimings; failed: string[] };
  loop: Side;
}

const asksHuman = (request: RecordedRequest) =>
  request.reply !== undefined &&
  'content' in request.reply &&
  request.reply.content.some((block) => block.type === 'tool_use' && block.name === humanApprovalToolName);

/** The gaps of one conversation's requests, in order: after a checkpoint (resume) or after a tool round. */
export function gapsOf(requests: RecordedRequest[], answeredAt: number[] | undefined, side: Side): void {
  let checkpoint = 0;
  for (let i = 0; i + 1 < requests.length; i++) {
    const [previous, next] = [requests[i], requests[i + 1]];
    if (previous.respondedAt === undefined) continue;
    if (!asksHuman(previous)) side.toolRounds.push(next.receivedAt - previous.respondedAt);
    else if (answeredAt) side.resumes.push(next.receivedAt - answeredAt[checkpoint++]);
  }
}

export function cacheReadRatio(conversations: RecordedRequest[][]): number {
  let read = 0;
  let prompt = 0;
  for (const requests of conversations) {
    for (const { usage } of requests.slice(1)) {
      if (!usage) continue;
      read += usage.cache_read_input_tokens ?? 0;
      prompt += usage.input_tokens + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0);
    }
  }
  return prompt > 0 ? read / prompt : Number.NaN;
}

async function runEngineExam(client: BenchClient, questions: number, n: number, answeredAt: number[]): Promise<string> {
  const sessionId = await client.createSession();
  const turnId = await client.startTurn(sessionId, examMessage(questions, n));
  await followExam(client, turnId, answeredAt);
  return turnId;
}

export const emptySide = (): Side => ({
  toolRounds: [],
  resumes: [],
  modelCalls: 0,
  cacheReadRatio: Number.NaN,
  wallMs: 0,
});

export async function measureRounds(
  stack: Stack,
  client: BenchClient,
  exams: number,
  questions: number,
  first: number,
): Promise<RoundsResult> {
  const engine = { ...emptySide(), historyBytesPerRound: [] as number[], failed: [] as string[] };
  const engineConversations: RecordedRequest[][] = [];
  const metricsBefore = await scrapeWorkerMetrics(stack.metricsUrl);
  let started = performance.now();
  for (let i = 0; i < exams; i++) {
    const from = stack.fake.requests.length;
    const answeredAt: number[] = [];
    try {
      const turnId = await runEngineExam(client, questions, first + i, answeredAt);
      const requests = stack.fake.requests.slice(from);
      if (requests.length !== examModelCalls(questions))
        engine.failed.push(`exam ${first + i}: ${requests.length}/${examModelCalls(questions)} model calls`);
      gapsOf(requests, answeredAt, engine);
      engineConversations.push(requests);
      engine.historyBytesPerRound.push((await transcriptFigures(stack.probeClient, turnId)).bytesPerRound);
    } catch (err) {
      engine.failed.push(String(err));
    }
  }
  engine.wallMs = performance.now() - started;
  const worker = timingsBetween(metricsBefore, await scrapeWorkerMetrics(stack.metricsUrl));
  engine.modelCalls = engineConversations.reduce((sum, requests) => sum + requests.length, 0);
  engine.cacheReadRatio = cacheReadRatio(engineConversations);

  const loop = emptySide();
  const inProcess = await createInProcessLoop({
    baseURL: stack.fake.url,
    skillsDir: path.resolve(__dirname, '..', 'skills'),
    dataDir: stack.dataDir,
  });
  const loopConversations: RecordedRequest[][] = [];
  started = performance.now();
  for (let i = 0; i < exams; i++) {
    const from = stack.fake.requests.length;
    await inProcess.run(examMessage(questions, first + exams + i), examModelCalls(questions) + 5);
    const requests = stack.fake.requests.slice(from);
    gapsOf(requests, undefined, loop);
    loopConversations.push(requests);
  }
  loop.wallMs = performance.now() - started;
  loop.modelCalls = loopConversations.reduce((sum, requests) => sum + requests.length, 0);
  loop.cacheReadRatio = cacheReadRatio(loopConversations);
  return { exams, questions, engine: { ...engine, worker }, loop };
}

const p = (values: number[], q: number) => ms(percentile(values, q));
const percent = (ratio: number) => (Number.isFinite(ratio) ? `${(ratio * 100).toFixed(1)}%` : '-');

export function roundsTable(r: RoundsResult): string {
  const overhead = (q: number) => ms(percentile(r.engine.toolRounds, q) - percentile(r.loop.toolRounds, q));
  const kib = r.engine.historyBytesPerRound.map((bytes) => (bytes / 1024).toFixed(2)).join(', ');
  const w = r.engine.worker;
  const mean = ({ meanMs, count }: { meanMs: number; count: number }) =>
    `${Number.isFinite(meanMs) ? meanMs.toFixed(1) : '-'} ms (${count})`;
  return [
    `${r.exams} exams of ${r.questions} questions, one at a time, the fake answering at once; skillflow ${r.engine.modelCalls} model calls in ` +
      `${(r.engine.wallMs / 1000).toFixed(1)} s, the in-process loop ${r.loop.modelCalls} in ${(r.loop.wallMs / 1000).toFixed(1)} s.`,
    '',
    '| measure | in-process loop | skillflow | overhead (skillflow − loop) | target | floor |',
    '|---|--:|--:|--:|--:|--:|',
    `| engine time per tool round, p50 / p95 ms (n) | ${p(r.loop.toolRounds, 50)} / ${p(r.loop.toolRounds, 95)} (${r.loop.toolRounds.length}) | ` +
      `${p(r.engine.toolRounds, 50)} / ${p(r.engine.toolRounds, 95)} (${r.engine.toolRounds.length}) | ${overhead(50)} / ${overhead(95)} | ≤ 20 / 60 | p50 ≤ 40 |`,
    `| checkpoint resume (answer POSTed → next model request), p50 / p95 ms (n) | - | ${p(r.engine.resumes, 50)} / ${p(r.engine.resumes, 95)} (${r.engine.resumes.length}) | | ≤ 50 / 150 | p50 ≤ 80 |`,
    `| workflow history per model round, KiB (each exam) | - | ${kib} | | ≤ 4 | ≤ 6 |`,
    `| prompt-cache read ratio from round 2 | ${percent(r.loop.cacheReadRatio)} | ${percent(r.engine.cacheReadRatio)} | | | |`,
    '',
    `The worker during skillflow's exams (SDK metrics, mean and count): workflow task schedule → start ${mean(w.wftScheduleToStart)}, ` +
      `execution ${mean(w.wftExecution)}; activity schedule → start ${mean(w.activityScheduleToStart)}, execution ${mean(w.activityExecution)}.`,
  ].join('\n');
}
