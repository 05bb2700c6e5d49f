import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { ChatMessage } from '../core/messages';
import type { ModelRequest } from '../core/model';
import { minRepeatedChars, type TranscriptDelta } from '../core/transcript';
import { FileStore } from '../lib/store';
import { examMessage, examModel, examModelCalls } from './support/exam-script';
import { useWorkerHarness } from './support/harness';
import { answerExam, startTurn } from './support/turns';

const { HistoryEvent } = temporal.api.history.v1;
const EventType = temporal.api.enums.v1.EventType;

/**
 * History stays small and flat (issue 15, item 3): the system prompt and tool definitions go to the worker by digest
 * after the first call, a subskill loaded again as a prefix of its first load, and the conversation by delta starting
 * after the previous response (which the worker holds), so a long exam's history
 * grows by about the same few KiB each round from its first question to its last. Before, each round carried the
 * system prompt and every tool definition again and every reload of a subskill its whole body: 12.3 KiB a round.
 *
 * FLAT_HISTORY_QUESTIONS (default 200): the 200-question exam (407 model calls, 202 checkpoints). The whole
 * turn's mean includes its fixed start (the skill pinned, the first call sent whole: about 37 KB), which a short exam
 * cannot spread under 4 KiB a round; a question's two rounds measured 1.9 and 5.0 KB (20 questions, 2026-11-26).
 */
const questions = Number(process.env.FLAT_HISTORY_QUESTIONS ?? 200);
const maxBytesPerRound = 4096;

describe('a long exam keeps its history small and flat', () => {
  const harness = useWorkerHarness('flat', {
    deps: () => ({
      skillsDir: librarySized(questions),
      store: new FileStore(fs.mkdtempSync(path.join(os.tmpdir(), 'sf-flat-')), 3_600_000),
    }),
  });

  it(`${questions} questions: at most ${maxBytesPerRound} bytes of history a round, the last questions no more than the first`, async () => {
    const { env, fake, taskQueue } = harness;
    fake.respond(examModel());
    const handle = await startTurn(env.client, taskQueue, examMessage(questions));
    await answerExam(handle);
    const result = await handle.result();
    expect({ status: result.status, error: result.error }).toEqual({ status: 'completed', error: undefined });

    // Nothing the worker holds goes again: no delta repeats the response before it (the loop appended it unchanged),
    // and each subskill's body goes whole once, its reloads as a prefix of that and their own last line.
    const deltas = await modelCallDeltas(handle);
    expect(deltas).toHaveLength(examModelCalls(questions) - 1);
    expect(deltas.flatMap((delta) => delta.append.filter((message) => message.role === 'assistant'))).toEqual([]);
    const longResults = deltas
      .flatMap((delta) => delta.append.flatMap(toolResultsOf))
      .filter((content) => content.length >= minRepeatedChars);
    expect(longResults.map((content) => /^(Skill|Subskill) \S+/.exec(content)?.[0])).toEqual([
      'Skill exam-mode-tuner',
      'Subskill question-generation',
      'Subskill adaptive-difficulty',
      'Subskill performance-analytics',
    ]);

    const rounds = await bytesPerRound(handle);
    expect(rounds).toHaveLength(examModelCalls(questions));
    const total = rounds.reduce((sum, bytes) => sum + bytes, 0);
    // A question is two rounds (ask it, then adapt the difficulty): compare the first ten questions with the last ten.
    const questionRounds = rounds.slice(3, 3 + 2 * questions);
    const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
    const first = mean(questionRounds.slice(0, 20));
    const lastTen = mean(questionRounds.slice(-20));
    expect(total / rounds.length).toBeLessThanOrEqual(maxBytesPerRound);
    expect(first).toBeLessThanOrEqual(maxBytesPerRound);
    expect(lastTen).toBeLessThanOrEqual(maxBytesPerRound);
    // Flat: what a question adds to history does not grow with the questions before it (a few bytes of ids and counters may).
    expect(lastTen).toBeLessThanOrEqual(first * 1.05);
  }, 600_000);
});

/** The bundled library with exam-mode-tuner allowing `count` questions (it allows 50, 60 adaptive steps and 200 rounds). */
function librarySized(count: number): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-flat-skills-'));
  fs.cpSync(path.resolve(__dirname, '..', 'skills'), dir, { recursive: true });
  const sidecar = path.join(dir, 'exam-mode-tuner', 'skillflow.yaml');
  const yaml = fs.readFileSync(sidecar, 'utf8');
  const edits: Array<[RegExp, string]> = [
    [/(question_count:\n\s+type: integer\n\s+minimum: 1\n\s+maximum: )50\n/, `$1${Math.max(50, count)}\n`],
    [/(adaptive-difficulty:\n\s+max-runs: )60\n/, `$1${Math.max(60, count + 10)}\n`],
    [/(max-iterations: )200\n/, `$1${Math.max(200, 2 * count + 50)}\n`],
  ];
  let sized = yaml;
  for (const [pattern, replacement] of edits) {
    const next = sized.replace(pattern, replacement);
    if (next === sized) throw new Error(`exam-mode-tuner/skillflow.yaml has no ${pattern.source}: update this test`);
    sized = next;
  }
  fs.writeFileSync(sidecar, sized);
  return dir;
}

/** The history's bytes (events as Temporal encodes them) from each model call's scheduling to the next's. */
async function bytesPerRound(handle: WorkflowHandle): Promise<number[]> {
  const history = await handle.fetchHistory();
  const rounds: number[] = [];
  let current = -1;
  for (const event of history.events ?? []) {
    const scheduled =
      event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
      event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel';
    if (scheduled) rounds.push(0);
    current = rounds.length - 1;
    if (current >= 0) rounds[current] += HistoryEvent.encode(HistoryEvent.create(event)).finish().length;
  }
  return rounds;
}

/** The deltas of the turn's model calls after its first (which sends the conversation whole). */
async function modelCallDeltas(handle: WorkflowHandle): Promise<TranscriptDelta[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).flatMap((event) => {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name !== 'callModel') return [];
    const request = JSON.parse(Buffer.from(scheduled.input!.payloads![0].data!).toString('utf8')) as ModelRequest;
    return request.delta ? [request.delta] : [];
  });
}

function toolResultsOf(message: ChatMessage): string[] {
  if (typeof message.content === 'string') return [];
  return message.content.flatMap((block) =>
    block.type === 'tool_result' && typeof block.content === 'string' ? [block.content] : [],
  );
}
