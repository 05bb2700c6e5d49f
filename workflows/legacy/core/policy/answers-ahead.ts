import { checkpointActions, checkpointIdOf, checkpointNumberOf, type CheckpointDecision } from '../checkpoints';
import { isPlainObject } from '../json-validator';
import type { PolicyState } from './types';

/**
 * Answers that arrive before their checkpoint is open. A worker pushes a turn's events when an activation ends, before
 * Temporal has recorded its workflow task; when that task then fails or times out, the server runs it again from
 * history, and the retry can bring in ONE activation the model's response that opens the checkpoint and the answer the
 * client gave to the checkpoint it was shown. The SDK runs update validators and handlers before it resolves the
 * activity, so the answer is checked while the turn has not opened that checkpoint yet (docs/api.md, "Checkpoints").
 *
 * Such an answer is let in to wait, narrowly: it must name the very checkpoint the turn numbers next, while the turn has
 * none open or mirrored, and it is decided (checked like any other answer) once the turn has numbered that checkpoint.
 * It is refused as soon as the turn cannot reach it in the activation it came with: the turn ended, asked the model
 * again, or ran another workflow task. So it can only be taken by the checkpoint its client was shown, which the same
 * history opens again, never by a later one the client has not seen.
 */

/** An answer let in ahead of its checkpoint, with where the turn was when it came. */
export interface AnswerAhead {
  checkpointId: string;
  /** The turn's rounds since a human last decided (each model call counts one) when the answer came. */
  round: number;
  /** The activation it came with (the workflow's history length then): the checkpoint opens in it or never. */
  activation: number;
}

/** Where the turn is now, as the workflow knows it. */
export interface TurnProgress {
  activation: number;
  /** The turn has decided its ending. */
  ended: boolean;
}

export type AheadOutcome = { kind: 'wait' } | { kind: 'decide' } | { kind: 'refuse'; message: string };

/** The answer as one let in ahead of its checkpoint, or null when it is not one (and is checked as it is). */
export function answerAheadOf(
  state: PolicyState,
  decision: CheckpointDecision,
  activation: number,
): AnswerAhead | null {
  if (state.open || state.delegated || !isPlainObject(decision) || !checkpointActions.includes(decision.action))
    return null;
  if (decision.checkpointId !== checkpointIdOf(state.checkpointCount + 1)) return null;
  return { checkpointId: decision.checkpointId, round: state.roundsSinceHuman, activation };
}

/**
 * What becomes of an answer let in ahead: decided once the turn has numbered its checkpoint (whether that checkpoint is
 * still pending is the usual check's to say), refused once the turn cannot open it any more, else it waits.
 */
export function answerAheadOutcome(state: PolicyState, ahead: AnswerAhead, now: TurnProgress): AheadOutcome {
  const gone = (why: string): AheadOutcome => ({
    kind: 'refuse',
    message: `Checkpoint ${ahead.checkpointId} cannot be answered: ${why}.`,
  });
  // A checkpoint opened in a later activation is not the one the client was shown (workflow code checks before it runs).
  if (now.activation !== ahead.activation) return gone('the turn went on without opening it');
  if (state.checkpointCount >= checkpointNumberOf(ahead.checkpointId)!) return { kind: 'decide' };
  if (now.ended) return gone('the turn ended without opening it');
  if (state.roundsSinceHuman !== ahead.round) return gone('the turn went on without opening it');
  return { kind: 'wait' };
}
