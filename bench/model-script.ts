import { examOutput } from '../test/support/exam-script';
import {
  text,
  toolUse,
  type MessagesRequestBody,
  type ResponseHandler,
  type ScriptedBlock,
} from '../test/support/fake-anthropic';

/**
 * What the scripted fake model answers in the benchmark. Many turns run at once, so answers cannot be queued in order:
 * the handler reads the turn's kind from a marker in its first user message and its round from the number of assistant
 * messages the request already carries (each round of a turn adds one).
 */

export type TurnKind = 'plain' | 'exam';

export const benchMessage = (kind: TurnKind, n: number): string =>
  kind === 'plain'
    ? `[bench:plain] Explain in two sentences what a hash map is (#${n}).`
    : `[bench:exam] Give me a practice test on data structures (#${n}).`;

const plainAnswer =
  'A hash map stores key-value pairs in an array of buckets and uses a hash of the key to find the bucket, so lookups, ' +
  'inserts and deletes take constant time on average. Collisions are resolved by chaining or open addressing, and the ' +
  'table is resized when it grows too full.';

const exam = 'exam-mode-tuner';
const subskill = (name: string) => toolUse('load_subskill', { skill: exam, subskill: name });

/**
 * The shortest path through exam-mode-tuner's plan: the orchestrator refuses a final answer before the plan is complete,
 * so after exam_params the model takes the three required steps, hands in the exam's output and asks post_exam_routing
 * before it answers.
 */
const examRounds: ScriptedBlock[][] = [
  [text('Loading the exam skill.'), toolUse('load_skill', { name: exam })],
  [
    toolUse('request_human_approval', {
      checkpoint: 'exam_params',
      summary: 'Exam on data structures',
      kind: 'approval',
      params: { question_count: 2, time_limit_min: 35, concepts: ['arrays', 'trees'] },
    }),
  ],
  [subskill('question-generation')],
  [subskill('adaptive-difficulty')],
  [subskill('performance-analytics')],
  [toolUse('submit_output', { output: examOutput(2) })],
  [
    text('You scored 100%.'),
    toolUse('request_human_approval', {
      checkpoint: 'post_exam_routing',
      summary: 'What next?',
      kind: 'approval',
      options: ['Stop here'],
    }),
  ],
  [text('Great work: the exam is done. Come back any time.')],
];

/** Checkpoints of an exam turn: how many the client answers, and which ones. */
export const examCheckpoints = ['exam_params', 'post_exam_routing'];
export const modelCallsPerTurn: Record<TurnKind, number> = { plain: 1, exam: examRounds.length };

function firstUserText(body: MessagesRequestBody): string {
  const first = body.messages[0] as { content: string | Array<{ type: string; text?: string }> } | undefined;
  if (!first) return '';
  return typeof first.content === 'string' ? first.content : first.content.map((block) => block.text ?? '').join('\n');
}

export function benchModel(chunkDelayMs: number): ResponseHandler {
  return (body) => {
    const round = body.messages.filter((message) => (message as { role?: string }).role === 'assistant').length;
    const kind: TurnKind = firstUserText(body).includes('[bench:exam]') ? 'exam' : 'plain';
    const content = kind === 'plain' ? [text(plainAnswer)] : (examRounds[round] ?? [text('The exam is over.')]);
    return { content, delayMs: chunkDelayMs, usage: { input_tokens: 1200, output_tokens: 60 } };
  };
}
