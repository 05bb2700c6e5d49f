import { answerFromLine, promptFor } from '../cli/answers';
import type { PendingCheckpoint } from '../lib/client';

const checkpoint = (
  kind: 'approval' | 'question',
  actions: PendingCheckpoint['actions'],
  options: string[] | null = null,
): PendingCheckpoint => ({
  id: 'cp-1',
  name: 'c',
  kind,
  summary: 's',
  params: null,
  paramsSchema: null,
  options,
  actions,
  requestedAt: '2026-11-26T06:00:00.000Z',
  expiresAt: null,
});

const approval = checkpoint('approval', ['approve', 'modify', 'cancel', 'choose'], ['a', 'b']);
const question = checkpoint('question', ['answer', 'cancel', 'choose'], ['a', 'b']);
/** A routing checkpoint a skill declares (the exam's post_exam_routing): an approval that takes only choose and cancel. */
const routing = checkpoint('approval', ['choose', 'cancel'], ['a', 'b']);

/** What `skillflow chat` offers at a checkpoint, and what a typed line means: only the actions the checkpoint accepts. */
describe('the chat prompt at a checkpoint', () => {
  it.each([
    [approval, 'approve? ([y]es, [m]odify, [c]ancel, a number to choose)> '],
    [checkpoint('approval', ['approve', 'modify', 'cancel']), 'approve? ([y]es, [m]odify, [c]ancel)> '],
    [question, 'answer (text, a number to choose, /cancel)> '],
    [checkpoint('question', ['answer', 'cancel']), 'answer (text, /cancel)> '],
    [routing, 'choose (a number, [c]ancel)> '],
  ])('offers what the checkpoint accepts (%#)', (pending, prompt) => {
    expect(promptFor(pending)).toBe(prompt);
  });

  it.each([
    [approval, 'y', { action: 'approve' }],
    [approval, '', { action: 'approve' }],
    [approval, 'm', 'modify'],
    [approval, 'c', { action: 'cancel' }],
    [approval, '2', { action: 'choose', choice: 'b' }],
    [approval, '3', null],
    [question, 'stacks', { action: 'answer', answer: 'stacks' }],
    [question, '/cancel', { action: 'cancel' }],
    [question, '1', { action: 'choose', choice: 'a' }],
    [routing, '1', { action: 'choose', choice: 'a' }],
    [routing, 'c', { action: 'cancel' }],
    [routing, 'y', null],
    [routing, '', null],
    [routing, 'm', null],
  ])('reads a line as an action the checkpoint accepts, or asks again (%#)', (pending, line, expected) => {
    expect(answerFromLine(pending, line)).toEqual(expected);
  });
});
