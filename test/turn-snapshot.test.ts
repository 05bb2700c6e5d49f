import { startingTurnState, type TurnState } from '../core/turn';
import { snapshotAgrees, supersedes, type DescribedPosition, type TurnSnapshot } from '../core/turn-snapshot';

const state = (over: Partial<TurnState> = {}): TurnState => ({
  ...startingTurnState({ turnId: 't', sessionId: 's', userId: 'u', createdAt: '', updatedAt: '' }),
  ...over,
});
const at = (offset: number, over: Partial<TurnState> = {}, runId: string | undefined = 'run-1'): TurnSnapshot => ({
  offset,
  ...(runId ? { runId } : {}),
  state: state(over),
});
/** A snapshot of another run of the turn (reset, or the same turn id run again). */
const ofRun = (runId: string | undefined, offset: number, over: Partial<TurnState> = {}): TurnSnapshot =>
  at(offset, over, runId);
const described = (over: Partial<DescribedPosition> = {}): DescribedPosition => ({
  runId: 'run-1',
  status: 'running',
  checkpoint: null,
  skill: null,
  step: null,
  ...over,
});
const pending = { id: 'cp-1', name: 'go' } as TurnState['pendingCheckpoint'];

/** Whether a published state may answer GET /v1/turns/:id for what describe says (core/turn-snapshot.ts). */
describe('published turn state against describe', () => {
  it.each<[string, TurnSnapshot, DescribedPosition, boolean]>([
    ['same status, no checkpoint, no skill', at(3), described(), true],
    [
      'no status attribute yet (a turn started without its session) reads as running',
      at(1),
      described({ status: null }),
      true,
    ],
    [
      'waiting at the checkpoint describe names',
      at(4, { status: 'waiting', pendingCheckpoint: pending }),
      described({ status: 'waiting', checkpoint: 'go' }),
      true,
    ],
    [
      'describe says waiting, the state does not yet (lags)',
      at(3),
      described({ status: 'waiting', checkpoint: 'go' }),
      false,
    ],
    [
      'describe still says running, the state already waits (its task not completed)',
      at(4, { status: 'waiting', pendingCheckpoint: pending }),
      described(),
      false,
    ],
    ['same status, another step', at(6, { skill: 'exam', step: 'a' }), described({ skill: 'exam', step: 'b' }), false],
    [
      'same status and step, another skill',
      at(6, { skill: 'exam', step: 'a' }),
      described({ skill: 'other', step: 'a' }),
      false,
    ],
    ['skill and step as described', at(6, { skill: 'exam', step: 'a' }), described({ skill: 'exam', step: 'a' }), true],
    [
      'checkpoint gone in describe, still pending in the state',
      at(5, { pendingCheckpoint: pending }),
      described(),
      false,
    ],
    [
      'another run (reset since), though waiting at the checkpoint describe names',
      ofRun('run-0', 9, { status: 'waiting', pendingCheckpoint: pending }),
      described({ status: 'waiting', checkpoint: 'go' }),
      false,
    ],
    [
      'no run named (published by a worker before runs were): the attributes alone',
      ofRun(undefined, 9, { status: 'waiting', pendingCheckpoint: pending }),
      described({ status: 'waiting', checkpoint: 'go' }),
      true,
    ],
  ])('%s', (_name, snapshot, position, agrees) => {
    expect(snapshotAgrees(snapshot, position)).toBe(agrees);
  });

  it.each<[string, TurnSnapshot, TurnSnapshot | undefined, boolean]>([
    ['nothing kept', at(1), undefined, true],
    ['a later offset', at(5), at(4), true],
    ['the same offset (a later activation)', at(4), at(4), true],
    ['an earlier offset', at(3), at(4), false],
    ['another run at an earlier offset (the turn reset: its log starts again)', ofRun('run-2', 3), at(9), true],
    ['another run at a later offset', ofRun('run-2', 9), at(3), true],
    ['an earlier offset, the kept one naming no run (written before runs were)', at(3), ofRun(undefined, 4), false],
    [
      'an earlier offset naming no run (a worker before runs were), over a kept one that does',
      ofRun(undefined, 3),
      at(4),
      false,
    ],
    ['a later offset naming no run', ofRun(undefined, 5), at(4), true],
  ])('a snapshot replaces the kept one: %s', (_name, next, kept, replaces) => {
    expect(supersedes(next, kept)).toBe(replaces);
  });
});
