import type { PendingCheckpoint } from '../core/checkpoints';
import type { TurnEventBody } from '../core/events';
import { zeroUsage, type Usage } from '../core/model';
import {
  cancelRequested,
  childProgressed,
  childReturned,
  childStarted,
  type ChildReturned,
} from '../core/run/children';
import type { RunCommand } from '../core/run/commands';
import { newRunState, type RunState } from '../core/run/state';
import type { SkillExecution } from '../core/schemas/skill-runs';
import type { SkillProgress, SkillRunResult } from '../core/skill-runs';

/**
 * Skill runs a run invoked (core/run/children.ts): their progress taken once and in order, the checkpoint they wait at
 * shown as the run's own, and their return (a result, or how Temporal closed them) answering the invoke_skill call.
 */
const at = Date.parse('2026-11-28T10:00:10.000Z');
const child = 'turn-1/quiz/call-1';
const record: SkillExecution = {
  workflowId: child,
  parentWorkflowId: 'turn-1',
  callId: 'call-1',
  skill: 'quiz',
  depth: 1,
  status: 'running',
  task: 'Ask',
  params: {},
  startedAt: '2026-11-28T10:00:00.000Z',
  endedAt: null,
  durationMs: null,
  output: null,
  error: null,
  usage: zeroUsage(),
};
const usage: Usage = { ...zeroUsage(), inputTokens: 100, outputTokens: 20 };
const checkpointAt = (id: string): PendingCheckpoint => ({
  id,
  name: 'q',
  kind: 'question',
  summary: 'Which?',
  params: null,
  paramsSchema: null,
  options: ['a', 'b'],
  actions: ['answer', 'cancel', 'choose'],
  requestedAt: '2026-11-28T10:00:05.000Z',
  expiresAt: null,
  skill: 'quiz',
  depth: 1,
});
const event: TurnEventBody = { type: 'message', text: 'Question 1', depth: 1 };
const grandchild: SkillExecution = { ...record, workflowId: `${child}/x`, parentWorkflowId: child, depth: 2 };
const progress = (seq: number, extra: Partial<SkillProgress> = {}): SkillProgress => ({
  workflowId: child,
  seq,
  events: [event],
  status: 'running',
  pendingCheckpoint: null,
  usage,
  checkpointCount: 0,
  skills: [],
  ...extra,
});

const started = childStarted(newRunState(), child, record);
const run = started.state;
/** Taken in order: each step's state is the next one's. */
function walk(state: RunState, ...steps: Array<(state: RunState) => { state: RunState; commands: RunCommand[] }>) {
  const commands: RunCommand[][] = [];
  for (const step of steps) {
    const next = step(state);
    state = next.state;
    commands.push(next.commands);
  }
  return { state, commands };
}

describe('a skill run starts', () => {
  it('with its record, running', () => {
    expect(started.commands).toEqual([{ kind: 'record_runs', records: [record] }]);
    expect(run.children[child]).toEqual({ seq: 0, usage: zeroUsage(), record });
  });
});

describe('its progress', () => {
  const shown = (id: string): RunCommand[] => [
    { kind: 'show_checkpoint', checkpoint: checkpointAt(id), askedBy: child },
    { kind: 'set_status', status: 'waiting' },
  ];
  const cleared: RunCommand[] = [
    { kind: 'show_checkpoint', checkpoint: null, askedBy: null },
    { kind: 'set_status', status: 'running' },
  ];
  const taken = (extra: RunCommand[] = [], skills: SkillExecution[] = []): RunCommand[] => [
    { kind: 'relay', events: [event] },
    { kind: 'count_child_usage', workflowId: child, usage },
    { kind: 'record_runs', records: [...skills, { ...record, usage }] },
    ...extra,
  ];

  it.each<[string, RunState, SkillProgress, RunCommand[]]>([
    ['is relayed, counted and recorded', run, progress(1, { skills: [grandchild] }), taken([], [grandchild])],
    ['of a run it did not invoke is ignored', run, progress(1, { workflowId: 'other' }), []],
    ['without a run at all (a signal by hand) is ignored', run, null as unknown as SkillProgress, []],
    [
      'shows the checkpoint the skill run waits at',
      run,
      progress(1, { pendingCheckpoint: checkpointAt('cp-1'), checkpointCount: 1 }),
      taken(shown('cp-1')),
    ],
    [
      'does not show again a checkpoint whose answer this run passed down',
      { ...run, forwarded: ['cp-1'] },
      progress(1, { pendingCheckpoint: checkpointAt('cp-1'), checkpointCount: 1 }),
      taken(),
    ],
  ])('%s', (_, state, sent, commands) => {
    expect(childProgressed(state, sent).commands).toEqual(commands);
  });

  it('is taken once, in order: a repeated or late one is ignored', () => {
    const { state, commands } = walk(
      run,
      (state) => childProgressed(state, progress(2)),
      (state) => childProgressed(state, progress(2)),
      (state) => childProgressed(state, progress(1)),
    );
    expect(commands.map((step) => step.length)).toEqual([3, 0, 0]);
    expect(state.children[child]).toMatchObject({ seq: 2, usage });
  });

  it('moves the checkpoint shown, and the policy with it: another, then none', () => {
    const { state, commands } = walk(
      run,
      (state) => childProgressed(state, progress(1, { pendingCheckpoint: checkpointAt('cp-1'), checkpointCount: 1 })),
      (state) => childProgressed(state, progress(2, { pendingCheckpoint: checkpointAt('cp-1'), checkpointCount: 1 })),
      (state) => childProgressed(state, progress(3, { pendingCheckpoint: checkpointAt('cp-2'), checkpointCount: 2 })),
      (state) => childProgressed(state, progress(4, { checkpointCount: 3 })),
    );
    expect(commands).toEqual([taken(shown('cp-1')), taken(), taken(shown('cp-2')), taken(cleared)]);
    expect(state.mirrored).toBeNull();
    expect(state.policy).toMatchObject({ delegated: null, checkpointCount: 3 });
  });

  it('numbers the policy on: a skill run that numbered checkpoints without showing one', () => {
    const step = childProgressed(run, progress(1, { checkpointCount: 4 }));
    expect(step.commands).toEqual(taken());
    expect(step.state.policy.checkpointCount).toBe(4);
  });

  it('of a run asked to cancel keeps the checkpoint shown, and the status, when the skill run clears it', () => {
    const waiting = childProgressed(run, progress(1, { pendingCheckpoint: checkpointAt('cp-1'), checkpointCount: 1 }));
    const step = childProgressed(
      cancelRequested(waiting.state),
      progress(2, { status: 'cancelled', checkpointCount: 1 }),
    );
    expect(step.commands).toEqual([
      { kind: 'relay', events: [event] },
      { kind: 'count_child_usage', workflowId: child, usage },
      { kind: 'record_runs', records: [{ ...record, status: 'cancelled', usage }] },
    ]);
    expect(step.state.mirrored?.checkpoint.id).toBe('cp-1');
    expect(step.state.policy.delegated).toBeNull();
  });
});

describe('its return', () => {
  const call = { id: 'call-1', name: 'invoke_skill', input: { skill: 'quiz', task: 'Ask' } };
  const result = (extra: Partial<SkillRunResult> = {}): SkillRunResult => ({
    skill: 'quiz',
    status: 'completed',
    success: true,
    output: { score: 3 },
    usage,
    checkpointCount: 2,
    skills: [grandchild],
    ...extra,
  });
  const returned = (outcome: ChildReturned['outcome']): ChildReturned => ({ workflowId: child, call, outcome, at });
  const ended = (extra: Partial<SkillExecution>): SkillExecution => ({
    ...record,
    status: 'completed',
    endedAt: '2026-11-28T10:00:10.000Z',
    durationMs: 10_000,
    output: { score: 3 },
    usage,
    ...extra,
  });
  const kept = (end: SkillExecution): RunCommand[] => [
    { kind: 'count_child_usage', workflowId: child, usage },
    { kind: 'record_runs', records: [grandchild, end] },
  ];
  const reply = (answer: object, isError = false): RunCommand => ({
    kind: 'reply_to_call',
    answer: { content: JSON.stringify(answer), isError, result: answer },
  });

  it.each<[string, ChildReturned['outcome'], RunCommand[]]>([
    [
      'with its output: the call gets it',
      { kind: 'result', result: result() },
      [...kept(ended({})), reply({ skill_id: 'quiz', output: { score: 3 }, success: true })],
    ],
    [
      'failed: the call gets why',
      {
        kind: 'result',
        result: result({
          status: 'failed',
          reason: 'max_rounds',
          success: false,
          output: null,
          error: { code: 'max_rounds', message: 'It ran out of rounds.' },
        }),
      },
      [
        ...kept(
          ended({ status: 'failed', output: null, error: { code: 'max_rounds', message: 'It ran out of rounds.' } }),
        ),
        reply({ skill_id: 'quiz', output: null, success: false, error: 'It ran out of rounds.' }, true),
      ],
    ],
    [
      'not finished, without an error of its own: the call says how it ended',
      { kind: 'result', result: result({ status: 'cancelled', reason: 'expired', success: false, output: null }) },
      [
        ...kept(
          ended({
            status: 'cancelled',
            output: null,
            error: { code: 'expired', message: 'Skill quiz did not finish.' },
          }),
        ),
        reply({ skill_id: 'quiz', output: null, success: false, error: 'Skill quiz did not finish (expired).' }, true),
      ],
    ],
    [
      'with no reason either: its status says it',
      { kind: 'result', result: result({ status: 'failed', success: false, output: null }) },
      [
        ...kept(
          ended({ status: 'failed', output: null, error: { code: 'failed', message: 'Skill quiz did not finish.' } }),
        ),
        reply({ skill_id: 'quiz', output: null, success: false, error: 'Skill quiz did not finish (failed).' }, true),
      ],
    ],
    [
      'terminated in Temporal: a failed run with no usage or records of its own',
      { kind: 'closed', closure: { kind: 'terminated' } },
      [
        { kind: 'count_child_usage', workflowId: child, usage: zeroUsage() },
        {
          kind: 'record_runs',
          records: [
            ended({
              status: 'failed',
              output: null,
              usage: zeroUsage(),
              error: { code: 'terminated', message: 'The skill run of quiz was terminated in Temporal.' },
            }),
          ],
        },
        reply(
          {
            skill_id: 'quiz',
            output: null,
            success: false,
            error: 'The skill run of quiz was terminated in Temporal.',
          },
          true,
        ),
      ],
    ],
  ])('%s', (_, outcome, commands) => {
    const step = childReturned(run, returned(outcome));
    expect(step.commands).toEqual(commands);
    expect(step.state.children[child].record.endedAt).toBe('2026-11-28T10:00:10.000Z');
  });

  it('clears the checkpoint it showed, and counts its checkpoints and runs in the policy', () => {
    const waiting = childProgressed(run, progress(1, { pendingCheckpoint: checkpointAt('cp-1'), checkpointCount: 1 }));
    const policy = { ...waiting.state.policy, invocations: { left: 3, inResponse: 1 } };
    const step = childReturned({ ...waiting.state, policy }, returned({ kind: 'result', result: result() }));
    expect(step.commands.slice(0, 2)).toEqual([
      { kind: 'show_checkpoint', checkpoint: null, askedBy: null },
      { kind: 'set_status', status: 'running' },
    ]);
    expect(step.state.mirrored).toBeNull();
    expect(step.state.policy).toMatchObject({ delegated: null, checkpointCount: 2, invocations: { left: 2 } });
  });

  it('to a run asked to cancel: its records are kept, then the run stops, its checkpoint still shown', () => {
    const waiting = childProgressed(run, progress(1, { pendingCheckpoint: checkpointAt('cp-1'), checkpointCount: 1 }));
    const step = childReturned(cancelRequested(waiting.state), returned({ kind: 'result', result: result() }));
    expect(step.commands).toEqual([
      ...kept(ended({})),
      { kind: 'stop_cancelled', message: 'The run was cancelled while the skill run of quiz ran.' },
    ]);
    expect(step.state.mirrored?.checkpoint.id).toBe('cp-1');
  });

  it('cancelled with the run asked to cancel: the run stops at once', () => {
    const cancelling = cancelRequested(run);
    expect(childReturned(cancelling, returned({ kind: 'closed', closure: { kind: 'cancelled' } }))).toEqual({
      state: cancelling,
      commands: [{ kind: 'stop_cancelled', message: 'The run was cancelled while the skill run of quiz ran.' }],
    });
  });

  it('progress after it returned still counts, and leaves its ended record as it is', () => {
    const back = childReturned(run, returned({ kind: 'result', result: result() }));
    const late = childProgressed(back.state, progress(1));
    expect(late.commands).toEqual([
      { kind: 'relay', events: [event] },
      { kind: 'count_child_usage', workflowId: child, usage },
      { kind: 'record_runs', records: [] },
    ]);
    expect(late.state.children[child].record).toEqual(back.state.children[child].record);
  });
});
