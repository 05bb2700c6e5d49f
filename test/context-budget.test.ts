import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundledSkillsDir } from './support/deps';
import { examOutput } from './support/exam-script';
import { text, toolUse, type FakeAnthropic, type MessagesRequestBody } from './support/fake-anthropic';
import { useWorkerHarness } from './support/harness';
import type { TemporalTestEnv } from './support/temporal';
import { answerNext, startTurn } from './support/turns';

const questions = 60;
const windowTokens = 200_000;
const budgetFraction = 0.5;
/** Temporal warns at 10 MiB of history; a long exam must stay far below it. */
const historyBudgetBytes = 4 * 1024 * 1024;
const tokensOf = (body: MessagesRequestBody) =>
  Math.ceil(JSON.stringify([body.system, body.tools, body.messages]).length / 4);

/**
 * The bundled exam with an adaptive-difficulty subskill of realistic production size (~12 KB, ~3k tokens): re-read
 * after every answer, 60 answers would need ~180k tokens of it alone. And up to 60 questions instead of 50.
 */
function examWithLargeSubskill(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-budget-'));
  fs.cpSync(bundledSkillsDir, dir, { recursive: true });
  const file = path.join(dir, 'exam-mode-tuner', 'subskills', 'adaptive-difficulty.md');
  const original = fs.readFileSync(file, 'utf8');
  const rubric = Array.from(
    { length: 60 },
    (_, i) =>
      `- Rubric ${i + 1}: when the learner's answer shows pattern ${i + 1}, weigh it against the concept map and adjust by one level at most.`,
  ).join('\n');
  fs.writeFileSync(file, `${original}\n\n## Detailed rubric\n\n${rubric}\n`);
  // The bundled exam allows at most 50 questions; this one is longer (its step limit is 60 already).
  const sidecar = path.join(dir, 'exam-mode-tuner', 'skillflow.yaml');
  fs.writeFileSync(
    sidecar,
    fs.readFileSync(sidecar, 'utf8').replace(/(question_count:\n(?: {8}.*\n)*? {8}maximum:) 50/, `$1 ${questions}`),
  );
  return dir;
}

describe('context budget: a 60-question exam stays within the window', () => {
  const harness = useWorkerHarness('budget', { skillsDir: examWithLargeSubskill });
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let taskQueue: string;

  beforeAll(() => ({ env, fake, taskQueue } = harness));

  it('compacts settled rounds, keeps the current step whole, and finishes the plan', async () => {
    let asked = 0;
    let phase: 'start' | 'params' | 'generate' | 'ask' | 'adapt' | 'analytics' | 'output' | 'route' | 'done' = 'start';
    fake.respond((body) => {
      const usage = { input_tokens: tokensOf(body), output_tokens: 40 };
      const reply = (content: ReturnType<typeof text>[]) => ({ content, usage });
      switch (phase) {
        case 'start':
          phase = 'params';
          return reply([toolUse('load_skill', { name: 'exam-mode-tuner' })]);
        case 'params':
          phase = 'generate';
          return reply([
            toolUse('request_human_approval', {
              checkpoint: 'exam_params',
              summary: '60 questions',
              kind: 'approval',
              params: { question_count: questions, time_limit_min: 240, concepts: ['algorithms'] },
            }),
          ]);
        case 'generate':
          phase = 'ask';
          return reply([toolUse('load_subskill', { skill: 'exam-mode-tuner', subskill: 'question-generation' })]);
        case 'ask':
          asked++;
          phase = 'adapt';
          return reply([
            text(`Question ${asked}: explain concept ${asked} in one sentence.`),
            toolUse('request_human_approval', {
              checkpoint: `question_${asked}`,
              summary: `Question ${asked}`,
              kind: 'question',
            }),
          ]);
        case 'adapt':
          phase = asked === questions ? 'analytics' : 'ask';
          return reply([
            text(`Answer ${asked} noted.`),
            toolUse('load_subskill', { skill: 'exam-mode-tuner', subskill: 'adaptive-difficulty' }),
          ]);
        case 'analytics':
          phase = 'output';
          return reply([toolUse('load_subskill', { skill: 'exam-mode-tuner', subskill: 'performance-analytics' })]);
        case 'output':
          phase = 'route';
          return reply([toolUse('submit_output', { output: examOutput(questions) })]);
        case 'route':
          phase = 'done';
          return reply([
            text('Report: 60/60 answered.'),
            toolUse('request_human_approval', { checkpoint: 'post_exam_routing', summary: 'Next?', kind: 'approval' }),
          ]);
        default:
          return reply([text('Exam complete.')]);
      }
    });

    const handle = await startTurn(env.client, taskQueue, 'A 60-question exam on algorithms, please.', {
      settings: { contextWindowTokens: windowTokens, contextBudgetFraction: budgetFraction, maxRounds: 10 },
    });
    let last = (await answerNext(handle, { action: 'approve' })).id;
    for (let n = 1; n <= questions; n++)
      last = (
        await answerNext(
          handle,
          { action: 'answer', answer: `My answer to question ${n} is a full sentence about it.` },
          last,
        )
      ).id;
    await answerNext(handle, { action: 'choose', choice: 'Stop here' }, last);
    const result = await handle.result();

    expect(result).toMatchObject({ status: 'completed', output: 'Exam complete.' });
    expect(asked).toBe(questions);
    const sizes = fake.requests.map((request) => tokensOf(request.body));
    const largest = Math.max(...sizes);
    console.log(
      `context budget: ${fake.requests.length} model calls, largest request ~${largest} tokens (budget ${windowTokens * budgetFraction})`,
    );
    expect(largest).toBeLessThan(windowTokens * budgetFraction);

    const adaptCalls = fake.requests.filter((request) =>
      JSON.stringify(request.body.messages).includes('Detailed rubric'),
    );
    expect(adaptCalls.length).toBeGreaterThan(0);
    const final = fake.requests.at(-1)!.body.messages as Array<{ role: string; content: unknown }>;
    const stubs = JSON.stringify(final).match(/\[settled\]/g) ?? [];
    expect(stubs.length).toBeGreaterThan(30);
    const lastAdapt = fake.requests.filter((request) => (request.body.messages as unknown[]).length > 0).at(-3)!;
    expect(JSON.stringify(lastAdapt.body.messages)).toContain('Rubric 60:');

    const description = await handle.describe();
    console.log(
      `context budget: history of the 60-question turn: ${description.historyLength} events, ${Math.round((description.historySize ?? 0) / 1024)} KiB`,
    );
    expect(description.historySize).toBeLessThan(historyBudgetBytes);
  }, 240_000);
});
