import { allowedActions, decisionProblems, type PendingCheckpoint } from '../core/checkpoints';
import { checkpointDetails, readyAnswers } from '../core/checkpoint-details';
import { schemaOfValues } from '../core/json-validator';
import { pastedAnswers } from './support/current-details';

const target = { answerTo: 'turn-s1-1', signal: 'checkpointDecision', update: 'answerCheckpoint' };

function checkpoint(overrides: Partial<PendingCheckpoint>): PendingCheckpoint {
  const base = {
    id: 'cp-1',
    name: 'exam_params',
    kind: 'approval' as const,
    summary: 'Approve the exam: 10 questions, 35 minutes',
    params: { question_count: 10, time_limit_min: 35 },
    options: null,
    requestedAt: '2026-11-26T06:00:00.000Z',
    expiresAt: '2026-11-26T06:30:00.000Z',
    skill: 'exam-mode-tuner',
    depth: 0,
    ...overrides,
  };
  return { paramsSchema: base.params ? schemaOfValues(base.params) : null, actions: allowedActions(base), ...base };
}

describe('the current details a waiting run shows in the Temporal UI', () => {
  it('is empty when the run waits at no checkpoint', () => {
    expect(checkpointDetails(null, target)).toBe('');
  });

  it('names the checkpoint: name, id, kind, skill, summary, deadline, parameters, options, actions', () => {
    const details = checkpointDetails(checkpoint({ options: ['Short', 'Long'] }), target);
    expect(details.split('\n').slice(0, 9)).toEqual([
      '**Waiting for a human** at checkpoint **exam_params** (`cp-1`, approval), asked by skill `exam-mode-tuner`.',
      '',
      '> Approve the exam: 10 questions, 35 minutes',
      '',
      '- Deadline: 2026-11-26T06:30:00.000Z',
      '- Parameters: `{"question_count":10,"time_limit_min":35}`',
      '- Options: `Short`, `Long`',
      '- Actions: approve, modify, cancel, choose',
      '',
    ]);
    expect(details).toContain(
      'Answer it with the update `answerCheckpoint` (validated: a rejection says why) or the signal `checkpointDecision`',
    );
  });

  it.each([
    [
      'an approval',
      checkpoint({}),
      { approve: {}, modify: { overrides: { question_count: 10, time_limit_min: 35 } }, cancel: {} },
    ],
    [
      'an approval without params',
      checkpoint({ params: null }),
      { approve: {}, modify: { note: 'What to change, in your own words' }, cancel: {} },
    ],
    [
      'a question with options',
      checkpoint({ kind: 'question', params: null, options: ['stack', 'queue'] }),
      { answer: { answer: 'Your answer' }, cancel: {}, choose: { choice: 'stack' } },
    ],
  ])('offers one ready answer per action of %s, each one the checkpoint accepts as written', (_, pending, expected) => {
    const pasted = pastedAnswers(checkpointDetails(pending, target));
    expect(pasted).toEqual(
      Object.fromEntries(
        Object.entries(expected).map(([action, extra]) => [
          action,
          { checkpointId: 'cp-1', action, ...extra, by: 'operator' },
        ]),
      ),
    );
    for (const { decision } of readyAnswers(pending)) expect(decisionProblems(pending, decision)).toEqual([]);
  });

  it('says when there is no deadline and no parameters, and quotes a summary of several lines', () => {
    const details = checkpointDetails(
      checkpoint({ kind: 'question', params: null, expiresAt: null, skill: null, summary: 'First line\nSecond line' }),
      target,
    );
    expect(details).toMatch(
      /^\*\*Waiting for a human\*\* at checkpoint \*\*exam_params\*\* \(`cp-1`, question\)\.\n\n> First line\n> Second line\n/,
    );
    expect(details).toContain('- Deadline: none (it waits until answered)\n- Parameters: none\n');
  });

  it('keeps a ready answer pasteable when a value holds backticks', () => {
    const details = checkpointDetails(
      checkpoint({ kind: 'question', params: null, options: ['use `pop`', 'plain'] }),
      target,
    );
    expect(details).toContain('- Options: `` use `pop` ``, `plain`\n');
    expect(pastedAnswers(details).choose).toEqual({
      checkpointId: 'cp-1',
      action: 'choose',
      choice: 'use `pop`',
      by: 'operator',
    });
  });

  it('a turn names the skill run that asked; the skill run itself sends operators to its turn', () => {
    const pending = checkpoint({ skill: 'checker', depth: 2 });
    expect(checkpointDetails(pending, { ...target, askedBy: 'turn-s1-1/checker/toolu_1' })).toMatch(
      /^[^\n]*, asked by skill `checker` in skill run `turn-s1-1\/checker\/toolu_1` \(depth 2\)\.\n/,
    );
    expect(checkpointDetails(pending, { ...target, viaTurn: true })).toContain(
      'Answer it through its turn `turn-s1-1` with the update `answerCheckpoint`',
    );
  });
});
