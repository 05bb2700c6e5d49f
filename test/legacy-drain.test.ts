import {
  drainQueries,
  moveVerdictOf,
  sessionMoveVerdictOf,
  visibilityValue,
  type MoveVerdict,
  type SessionMoveVerdict,
} from '../core/legacy-drain';
import type { TurnStatus } from '../core/turn-status';

/** What `skillflow legacy` counts and which waiting runs it may move (core/legacy-drain.ts). */
describe('draining the old side', () => {
  it('counts a type on its task queue: running, and for turns and skill runs waiting', () => {
    const running = `WorkflowType = 'turnWorkflow' AND ExecutionStatus = "Running" AND TaskQueue = "skillflow"`;
    expect(drainQueries('turn', 'skillflow')).toEqual({
      running,
      waiting: `${running} AND SkillflowStatus = "waiting"`,
    });
    expect(drainQueries('session', 'q-1')).toEqual({
      running: `WorkflowType = 'sessionWorkflow' AND ExecutionStatus = "Running" AND TaskQueue = "q-1"`,
    });
  });

  it.each(['sky"flow', 'a b', "x' OR '1'='1", ''])('refuses %j as a query value', (value) => {
    expect(() => visibilityValue(value)).toThrow(/cannot go in a visibility query/);
  });

  const pending = (depth?: number) => ({ id: 'cp-2', name: 'q_1', ...(depth === undefined ? {} : { depth }) });
  it.each<[string, number, TurnStatus, ReturnType<typeof pending> | null, MoveVerdict]>([
    [
      'a turn at its own checkpoint moves',
      0,
      'waiting',
      pending(0),
      { kind: 'move', checkpoint: { id: 'cp-2', name: 'q_1' } },
    ],
    [
      'a checkpoint of older code without a depth is the turn own',
      0,
      'waiting',
      pending(),
      { kind: 'move', checkpoint: { id: 'cp-2', name: 'q_1' } },
    ],
    [
      'a skill run at its own checkpoint moves',
      2,
      'waiting',
      pending(2),
      { kind: 'move', checkpoint: { id: 'cp-2', name: 'q_1' } },
    ],
    [
      'a turn showing its skill run checkpoint does not',
      0,
      'waiting',
      pending(1),
      { kind: 'mirrors', checkpoint: { id: 'cp-2', name: 'q_1' }, askedAtDepth: 1 },
    ],
    [
      'a skill run showing the checkpoint of a run below it does not',
      1,
      'waiting',
      pending(2),
      { kind: 'mirrors', checkpoint: { id: 'cp-2', name: 'q_1' }, askedAtDepth: 2 },
    ],
    ['a run answered meanwhile is in a call', 0, 'running', null, { kind: 'not-waiting', status: 'running' }],
    ['a run that ended', 1, 'completed', null, { kind: 'not-waiting', status: 'completed' }],
  ])('%s', (_, depth, status, checkpoint, verdict) => {
    expect(moveVerdictOf(depth, { status, pendingCheckpoint: checkpoint })).toEqual(verdict);
  });

  it.each<[string, { closed: boolean; activeTurnId?: string }, SessionMoveVerdict]>([
    ['an idle session moves', { closed: false }, { kind: 'move' }],
    [
      'a session with a turn running does not',
      { closed: false, activeTurnId: 't-1' },
      { kind: 'busy', activeTurnId: 't-1' },
    ],
    ['a closed session does not', { closed: true }, { kind: 'closed' }],
  ])('%s', (_, state, verdict) => {
    expect(sessionMoveVerdictOf(state)).toEqual(verdict);
  });
});
