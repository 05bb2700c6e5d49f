import type { CheckpointDecision } from '../core/checkpoints';
import { newPolicyState, reducePolicy, type PolicyState } from '../core/policy';
import { answerRejection, type AnswerRejection } from '../core/run/answers';

/**
 * Whether a run takes an answer now (core/run/answers.ts): one function for an update's validator and a signal's
 * handler, the answer the run already holds included.
 */
const at = 1_000;
const opened: PolicyState = reducePolicy(newPolicyState(), {
  type: 'tool.requested',
  at,
  call: {
    id: 'call-1',
    name: 'request_human_approval',
    input: { checkpoint: 'confirm', summary: 'Go on?', kind: 'approval' },
  },
}).state;
const approve: CheckpointDecision = { checkpointId: 'cp-1', action: 'approve' };

describe('answer rejections', () => {
  it.each<[string, CheckpointDecision | undefined, CheckpointDecision, AnswerRejection | null]>([
    ['an answer to the open checkpoint is taken', undefined, approve, null],
    [
      'a second answer to the checkpoint whose answer the run holds is no longer pending',
      approve,
      { checkpointId: 'cp-1', action: 'cancel' },
      { code: 'not_pending', message: 'Checkpoint cp-1 is no longer pending.' },
    ],
    [
      'an answer held for another checkpoint does not stop this one',
      { checkpointId: 'cp-9', action: 'cancel' },
      approve,
      null,
    ],
    [
      'an unknown checkpoint',
      undefined,
      { checkpointId: 'cp-2', action: 'approve' },
      { code: 'not_found', message: 'This turn has no checkpoint "cp-2".' },
    ],
    [
      'an action the checkpoint does not take',
      undefined,
      { checkpointId: 'cp-1', action: 'choose', choice: 'A' },
      {
        code: 'invalid_decision',
        message: 'An approval checkpoint accepts approve, modify, cancel; not "choose".',
        problems: [expect.objectContaining({ path: 'action', rule: 'enum' })],
      },
    ],
  ])('%s', (_, taken, decision, expected) => {
    expect(answerRejection(opened, taken, decision, at + 10)).toEqual(expected);
  });

  it('a signal with no answer at all is refused as an unknown checkpoint', () => {
    const garbage = null as unknown as CheckpointDecision;
    expect(answerRejection(opened, approve, garbage, at)).toEqual({
      code: 'not_found',
      message: 'This turn has no checkpoint undefined.',
    });
  });

  it('once the checkpoint is settled, an answer to it is no longer pending', () => {
    const settled = reducePolicy(opened, { type: 'checkpoint.resolved', at: at + 5, decision: approve }).state;
    expect(answerRejection(settled, undefined, approve, at + 10)).toEqual({
      code: 'not_pending',
      message: 'Checkpoint cp-1 is no longer pending.',
    });
  });
});
