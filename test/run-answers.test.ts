import type { CheckpointDecision, PendingCheckpoint } from '../core/checkpoints';
import { newPolicyState, policySettingsOf, reducePolicy, type PolicyState } from '../core/policy';
import type { ToolSpec } from '../core/tools';
import { answer, expire, type AnswerRejection } from '../core/run/answers';
import type { RunCommand } from '../core/run/commands';
import { newRunState, type RunState } from '../core/run/state';
import { defaultTurnSettings } from '../core/settings';
import { cancelledGuidance } from '../core/guidance';

/**
 * A human's answer, checked and applied in one reduction (core/run/answers.ts): the same function tells an update's
 * validator the rejection and its handler the state and commands; the expiry of the run's own checkpoint alike.
 */
const at = 1_000;
const deploy: ToolSpec = {
  name: 'deploy',
  description: 'Deploys.\nMore.',
  category: 'ops',
  inputSchema: { type: 'object', properties: { env: { type: 'string' } }, required: ['env'] },
  source: 'builtin',
  runsIn: 'activity',
  idempotent: false,
  needsApproval: true,
};
const started = reducePolicy(newPolicyState(), {
  type: 'turn.started',
  at,
  settings: policySettingsOf(defaultTurnSettings),
  catalog: [],
  tools: { tools: [deploy], rootGrants: ['deploy'] },
}).state;
const request = (policy: PolicyState, name: string, input: unknown) =>
  reducePolicy(policy, { type: 'tool.requested', at, call: { id: 'call-1', name, input } }).state;
/** The run asked a human to approve going on (cp-1). */
const asked: RunState = newRunState(
  request(started, 'request_human_approval', { checkpoint: 'confirm', summary: 'Go on?', kind: 'approval' }),
);
/** The run asked a human to approve a deploy (cp-1). */
const approving: RunState = newRunState(request(started, 'deploy', { env: 'staging' }));
const approve: CheckpointDecision = { checkpointId: 'cp-1', action: 'approve', by: 'ada' };

const childCheckpoint: PendingCheckpoint = {
  id: 'cp-2',
  name: 'q',
  kind: 'question',
  summary: 'Which?',
  params: null,
  paramsSchema: null,
  options: ['a', 'b'],
  actions: ['answer', 'cancel', 'choose'],
  requestedAt: '2026-11-28T10:00:00.000Z',
  expiresAt: null,
  skill: 'quiz',
  depth: 1,
};
/** A skill run below waits at cp-2, which this run mirrors. */
const mirroring: RunState = {
  ...newRunState(
    reducePolicy(started, { type: 'checkpoint.delegated', checkpoint: childCheckpoint, checkpointCount: 2 }).state,
  ),
  mirrored: { workflowId: 'child-1', checkpoint: childCheckpoint },
};

const shownNone: RunCommand = { kind: 'show_checkpoint', checkpoint: null, askedBy: null };
const resolved = (action: string, by = 'ada'): RunCommand => ({
  kind: 'emit',
  event: { type: 'checkpoint.resolved', checkpointId: 'cp-1', action, by } as never,
});
const running: RunCommand = { kind: 'set_status', status: 'running' };
const position: RunCommand = { kind: 'publish_position' };
const answered = (result: unknown): RunCommand => ({
  kind: 'resume_call',
  outcome: { kind: 'answered', answer: { content: JSON.stringify(result), isError: false, result } },
});

describe('an answer to the run own checkpoint', () => {
  it.each<[string, RunState, CheckpointDecision, RunCommand[]]>([
    [
      'approve: the call gets the decision',
      asked,
      approve,
      [shownNone, resolved('approve'), position, running, answered({ approved: true })],
    ],
    [
      'an answer without who gave it is by unknown',
      asked,
      { checkpointId: 'cp-1', action: 'approve' },
      [shownNone, resolved('approve', 'unknown'), position, running, answered({ approved: true })],
    ],
    [
      'a tool approval approved as proposed: the tool runs with its input',
      approving,
      approve,
      [
        shownNone,
        resolved('approve'),
        position,
        running,
        { kind: 'resume_call', outcome: { kind: 'approved', input: { env: 'staging' }, note: null } },
      ],
    ],
    [
      'a tool approval modified: the tool runs with the new input, the model told what changed',
      approving,
      { checkpointId: 'cp-1', action: 'modify', overrides: { env: 'prod' }, note: 'ship it', by: 'ada' },
      [
        shownNone,
        resolved('modify'),
        position,
        running,
        {
          kind: 'resume_call',
          outcome: {
            kind: 'approved',
            input: { env: 'prod' },
            note: 'Before deploy ran, the human changed its input to {"env":"prod"} and said: ship it',
          },
        },
      ],
    ],
    [
      'a tool approval declined: the call is answered, the tool does not run',
      approving,
      { checkpointId: 'cp-1', action: 'cancel', by: 'ada' },
      [
        shownNone,
        resolved('cancel'),
        position,
        running,
        answered({
          cancelled: true,
          ran: false,
          note: 'The human declined: deploy did not run. Go on without it, and tell the user if it matters.',
        }),
      ],
    ],
  ])('%s', (_, state, decision, commands) => {
    const step = answer(state, decision, at + 10);
    expect(step).toMatchObject({ kind: 'taken', commands });
    expect(step.kind === 'taken' && step.state.policy.open).toBeNull();
  });

  it('cancel ends the run with a last word first: it goes on running for that', () => {
    const step = answer(asked, { checkpointId: 'cp-1', action: 'cancel', by: 'ada' }, at + 10);
    expect(step).toMatchObject({
      kind: 'taken',
      commands: [
        shownNone,
        resolved('cancel'),
        position,
        running,
        {
          kind: 'resume_call',
          outcome: {
            kind: 'ended',
            answer: { content: '{"cancelled":true}', isError: false, result: { cancelled: true } },
            end: { kind: 'end', ending: { status: 'cancelled', reason: 'cancelled_by_user' } },
          },
        },
      ],
    });
    expect(step.kind === 'taken' && step.commands[4]).toMatchObject({
      outcome: { end: { lastWord: { guidance: cancelledGuidance } } },
    });
  });

  it('is taken once: a second answer to the same checkpoint is no longer pending', () => {
    const first = answer(asked, approve, at + 10);
    if (first.kind !== 'taken') throw new Error('The first answer was rejected.');
    expect(answer(first.state, { ...approve, action: 'cancel' }, at + 20)).toEqual({
      kind: 'rejected',
      code: 'not_pending',
      message: 'Checkpoint cp-1 is no longer pending.',
    });
  });

  it.each<[string, CheckpointDecision, AnswerRejection]>([
    [
      'an unknown checkpoint',
      { checkpointId: 'cp-2', action: 'approve' },
      { kind: 'rejected', code: 'not_found', message: 'This turn has no checkpoint "cp-2".' },
    ],
    [
      'an action the checkpoint does not take',
      { checkpointId: 'cp-1', action: 'choose', choice: 'A' },
      {
        kind: 'rejected',
        code: 'invalid_decision',
        message: 'An approval checkpoint accepts approve, modify, cancel; not "choose".',
        problems: [expect.objectContaining({ path: 'action', rule: 'enum' })],
      },
    ],
    [
      'no answer at all (a signal by hand)',
      null as unknown as CheckpointDecision,
      { kind: 'rejected', code: 'not_found', message: 'This turn has no checkpoint undefined.' },
    ],
  ])('rejects %s, and changes nothing', (_, decision, rejection) => {
    expect(answer(asked, decision, at + 10)).toEqual(rejection);
  });
});

describe('an answer to the checkpoint of a skill run below', () => {
  it('is settled here and passed down; the checkpoint no longer shows', () => {
    const decision: CheckpointDecision = { checkpointId: 'cp-2', action: 'choose', choice: 'a', by: 'ada' };
    const step = answer(mirroring, decision, at + 10);
    expect(step).toEqual({
      kind: 'taken',
      state: { ...mirroring, policy: { ...mirroring.policy, delegated: null }, mirrored: null, forwarded: ['cp-2'] },
      commands: [shownNone, running, { kind: 'pass_answer_down', workflowId: 'child-1', decision }],
    });
    if (step.kind !== 'taken') return;
    expect(answer(step.state, decision, at + 20)).toMatchObject({ kind: 'rejected', code: 'not_pending' });
  });

  it('is checked against it first', () => {
    expect(answer(mirroring, { checkpointId: 'cp-2', action: 'approve' }, at)).toMatchObject({
      kind: 'rejected',
      code: 'invalid_decision',
    });
  });
});

describe('the expiry of the run own checkpoint', () => {
  const expired: RunCommand = { kind: 'emit', event: { type: 'checkpoint.expired', checkpointId: 'cp-1' } };
  it.each<[string, RunState, RunCommand[]]>([
    [
      'a checkpoint that cancels on expiry ends the run at once: no running first',
      asked,
      [
        shownNone,
        expired,
        position,
        {
          kind: 'resume_call',
          outcome: {
            kind: 'ended',
            answer: { content: '{"expired":true}', isError: false, result: { expired: true } },
            end: expect.objectContaining({ ending: expect.objectContaining({ reason: 'expired' }) }),
          },
        },
      ],
    ],
    [
      'a tool approval nobody gave: the tool does not run, the run goes on',
      approving,
      [
        shownNone,
        expired,
        position,
        running,
        answered({
          skipped: true,
          ran: false,
          note: 'Nobody approved the call in time: deploy did not run. Go on without it, and tell the user.',
        }),
      ],
    ],
    [
      'with no checkpoint open, the call is answered with the refusal',
      newRunState(started),
      [shownNone, expired, position, running, answered({ refused: 'No checkpoint is pending.' })],
    ],
  ])('%s', (_, state, commands) => {
    expect(expire(state, 'cp-1', at + 10).commands).toEqual(commands);
  });
});
