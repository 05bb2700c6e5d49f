import type { PendingCheckpoint } from './checkpoints';
import { searchAttributeNameOf } from './search-attributes';
import type { TurnStatus } from './turn-status';
import { legacyTypeClause, type WorkflowKind } from './workflow-types';

/**
 * Draining the old side of the version boundary (`skillflow legacy`, docs/operators.md "Draining the old side"):
 * which runs of a legacy workflow type are still running, and which of them may be moved across. Deleted with the
 * old side.
 */

/** The run kinds of the old side (`legacyWorkflowTypes`). */
export type LegacyKind = WorkflowKind;

/** A value visibility accepts in double quotes: skillflow's type names and task queues never need escaping. */
export function visibilityValue(value: string): string {
  if (!/^[A-Za-z0-9._@:/-]+$/.test(value))
    throw new Error(`${JSON.stringify(value)} cannot go in a visibility query: use letters, digits and . _ @ : / -`);
  return `"${value}"`;
}

/** The running executions of one kind's legacy type on one task queue. */
export function runningOf(kind: LegacyKind, taskQueue: string): string {
  return `${legacyTypeClause(kind)} AND ExecutionStatus = "Running" AND TaskQueue = ${visibilityValue(taskQueue)}`;
}

/**
 * What `skillflow legacy` counts of one kind: all running, and (turns, skill runs) how many wait at a checkpoint; the
 * others are in a model call or a tool (a run just started has no status attribute yet).
 */
export interface DrainQueries {
  running: string;
  /** Absent for sessions, which keep no status attribute of their own. */
  waiting?: string;
}

export function drainQueries(kind: LegacyKind, taskQueue: string): DrainQueries {
  const running = runningOf(kind, taskQueue);
  if (kind === 'session') return { running };
  const waiting: TurnStatus = 'waiting';
  return { running, waiting: `${running} AND ${searchAttributeNameOf.status} = ${visibilityValue(waiting)}` };
}

/**
 * Whether a waiting legacy turn or skill run may be moved, from its `turnState` and its own depth (0 for a turn, its
 * `SkillflowDepth` for a skill run): only a run that waits at a checkpoint it asked itself; a run that shows the
 * checkpoint of a skill run below it crosses when that run is moved and it reaches a checkpoint of its own.
 */
export type MoveVerdict =
  | { kind: 'move'; checkpoint: Pick<PendingCheckpoint, 'id' | 'name'> }
  | { kind: 'not-waiting'; status: TurnStatus }
  | { kind: 'mirrors'; checkpoint: Pick<PendingCheckpoint, 'id' | 'name'>; askedAtDepth: number };

export function moveVerdictOf(
  ownDepth: number,
  state: { status: TurnStatus; pendingCheckpoint: Pick<PendingCheckpoint, 'id' | 'name' | 'depth'> | null },
): MoveVerdict {
  const pending = state.pendingCheckpoint;
  if (state.status !== 'waiting' || !pending) return { kind: 'not-waiting', status: state.status };
  const checkpoint = { id: pending.id, name: pending.name };
  const askedAtDepth = pending.depth ?? 0;
  return askedAtDepth === ownDepth ? { kind: 'move', checkpoint } : { kind: 'mirrors', checkpoint, askedAtDepth };
}

/** Whether a legacy session may be moved: only an idle one (an active turn is moved on its own, at its checkpoint). */
export type SessionMoveVerdict = { kind: 'move' } | { kind: 'busy'; activeTurnId: string } | { kind: 'closed' };

export function sessionMoveVerdictOf(state: { closed: boolean; activeTurnId?: string }): SessionMoveVerdict {
  if (state.closed) return { kind: 'closed' };
  return state.activeTurnId ? { kind: 'busy', activeTurnId: state.activeTurnId } : { kind: 'move' };
}
