import type { CheckpointDecision } from '../../core/checkpoints';
import { text, toolUse, type MessagesRequestBody, type ResponseHandler, type ScriptedBlock } from './fake-anthropic';

/**
 * A full exam-mode-tuner turn for the fake model, answered without per-test queues so many exams can run at once on
 * any worker: the handler finds the exam's round from the number of assistant messages the request carries.
 * Rounds: load the skill, ask exam_params, load question-generation, then per question ask it and adapt the
 * difficulty, then the analytics, the exam's output (submit_output), post_exam_routing, and the final answer.
 */

export const examSkill = 'exam-mode-tuner';
export const examMarker = '[exam]';
export const stopRoute = 'Stop here';

const subskill = (name: string) => toolUse('load_subskill', { skill: examSkill, subskill: name });
const ask = (checkpoint: string, kind: 'approval' | 'question', extra: Record<string, unknown> = {}) =>
  toolUse('request_human_approval', { checkpoint, summary: `About ${checkpoint}`, kind, ...extra });

export function examRounds(questions: number): ScriptedBlock[][] {
  const perQuestion = Array.from({ length: questions }, (_, i) => [
    [text(`Question ${i + 1}: name a data structure with property ${i + 1}.`), ask(`question_${i + 1}`, 'question')],
    [subskill('adaptive-difficulty')],
  ]).flat();
  return [
    [text('Loading the exam skill.'), toolUse('load_skill', { name: examSkill })],
    [
      ask('exam_params', 'approval', {
        params: { question_count: questions, time_limit_min: 35, concepts: ['arrays', 'stacks'] },
      }),
    ],
    [subskill('question-generation')],
    ...perQuestion,
    [subskill('performance-analytics')],
    [toolUse('submit_output', { output: examOutput(questions) })],
    [text('You scored 100%.'), ask('post_exam_routing', 'approval', { options: [stopRoute] })],
    [text('Great work: the exam is done.')],
  ];
}

/** The exam's structured output (its declared `output`), as the model hands it in after the analytics. */
export function examOutput(questions: number, scorePercent = 100) {
  return {
    score_percent: scorePercent,
    results: Array.from({ length: questions }, (_, i) => ({
      number: i + 1,
      concept: i % 2 ? 'stacks' : 'arrays',
      type: 'fill_blank',
      difficulty: 'medium',
      result: 'correct',
      points: 1,
    })),
    weak_areas: [],
    recommendation: 'exam-mode-tuner',
  };
}

/** Model calls and checkpoints of an exam of `questions` questions. */
export const examModelCalls = (questions: number) => 2 * questions + 7;
export const examCheckpoints = (questions: number) => questions + 2;

/** The message that starts an exam the handler recognises; `n` keeps messages of concurrent exams apart. */
export const examMessage = (questions: number, n = 1) =>
  `${examMarker}${questions} Give me a practice test on data structures (#${n}).`;

function firstUserText(body: MessagesRequestBody): string {
  const first = body.messages[0] as { content: string | Array<{ type: string; text?: string }> } | undefined;
  if (!first) return '';
  return typeof first.content === 'string' ? first.content : first.content.map((block) => block.text ?? '').join('\n');
}

/** The round of the exam a request belongs to, and the exam's number of questions; undefined when it is no exam. */
export function examRoundOf(body: MessagesRequestBody): { round: number; questions: number } | undefined {
  const match = new RegExp(`${examMarker.replace(/[[\]]/g, '\\$&')}(\\d+)`).exec(firstUserText(body));
  if (!match) return undefined;
  return {
    round: body.messages.filter((message) => (message as { role?: string }).role === 'assistant').length,
    questions: Number(match[1]),
  };
}

export function examModel(options: { delayMs?: number } = {}): ResponseHandler {
  return (body) => {
    const exam = examRoundOf(body);
    if (!exam)
      return { error: { status: 400, type: 'invalid_request_error', message: 'exam-script: not an exam request' } };
    const content = examRounds(exam.questions)[exam.round] ?? [text('The exam is over.')];
    return { content, delayMs: options.delayMs ?? 0 };
  };
}

/** What a human answers at an exam checkpoint. */
export function examDecision(checkpoint: {
  name: string;
  options?: string[] | null;
}): Omit<CheckpointDecision, 'checkpointId'> {
  if (checkpoint.name.startsWith('question_')) return { action: 'answer', answer: `My answer to ${checkpoint.name}.` };
  if (checkpoint.options && checkpoint.options.length > 0)
    return { action: 'choose', choice: checkpoint.options.find((o) => o === stopRoute) ?? checkpoint.options.at(-1) };
  return { action: 'approve' };
}
