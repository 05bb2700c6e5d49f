import { startingTurnState, type TurnState } from '../core/turn';
import { snapshotAgrees, supersedes, type DescribedPosition, type TurnSnapshot } from '../core/turn-snapshot';

const state = (over: Partial<TurnState> = {}): TurnState => ({ ...startingTurnState({ turnId: 't', sessionId: 's', userId: 'u', createdAt: '', updatedAt: '' }), ...over });
const at = (offset: number, over: Partial<TurnState> = {}): TurnSnapshot => ({ offset, state: state(over) });
const described = (over: Partial<DescribedPosition> = {}): DescribedPosition => ({ status: 'running', checkpoint: null, skill: null, step: null, ...over });
const pending = { id: 'cp-1', name: 'go' } as TurnState['pendingCheckpoint'];

/** Whether a published state may answer GET /v1/turns/:id for what describe says (core/turn-snapshot.ts). */
describe('published turn state against describe', () => {
  it.each<[string, TurnSnapshot, DescribedPosition, boolean]>([
    ['same status, no checkpoint, no skill', at(3), described(), true],
    ['no status attribute yet (a turn started without its session) reads as running', at(1), described({ status: null }), true],
    ['waiting at the checkpoint describe names', at(4, { status: 'waiting', pendingCheckpoint: pending }), described({ status: 'waiting', checkpoint: 'go' }), true],
    ['describe says waiting, the state does not yet (lags)', at(3), described({ status: 'waiting', checkpoint: 'go' }), false],
    ['describe still says running, the state already waits (its task not completed)', at(4, { status: 'waiting', pendingCheckpoint: pending }), described(), false],
    ['same status, another step', at(6, { skill: 'exam', step: 'a' }), described({ skill: 'exam', step: 'b' }), false],
    ['same status and step, another skill', at(6, { skill: 'exam', step: 'a' }), described({ skill: 'other', step: 'a' }), false],
    ['skill and step as described', at(6, { skill: 'exam', step: 'a' }), described({ skill: 'exam', step: 'a' }), true],
    ['checkpoint gone in describe, still pending in the state', at(5, { pendingCheckpoint: pending }), described(), false],
  ])('%s', (_name, snapshot, position, agrees) => {
    expect(snapshotAgrees(snapshot, position)).toBe(agrees);
  });

  it.each<[string, TurnSnapshot, TurnSnapshot | undefined, boolean]>([
    ['nothing kept', at(1), undefined, true],
    ['a later offset', at(5), at(4), true],
    ['the same offset (a later activation)', at(4), at(4), true],
    ['an earlier offset', at(3), at(4), false],
  ])('a snapshot replaces the kept one: %s', (_name, next, kept, replaces) => {
    expect(supersedes(next, kept)).toBe(replaces);
  });
});
