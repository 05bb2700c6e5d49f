import type { TurnState } from './turn';

/**
 * A turn's state as its worker last published it, with the offset of the last event in its log when it was taken and
 * the workflow run that took it: what `GET /v1/turns/:id` shows for a running turn without asking the worker
 * (docs/api.md). Offsets order the snapshots of one run only: a turn reset in Temporal, or a turn id that runs again (a
 * session deleted and created again with the same Idempotency-Key), goes on in another run whose log starts again.
 */
export interface TurnSnapshot {
  offset: number;
  /** Absent from snapshots of workers before runs were named (offsets alone order those). */
  runId?: string;
  state: TurnState;
}

/** What DescribeWorkflowExecution says of a running turn: its run, and its search attributes (null when unset). */
export interface DescribedPosition {
  runId: string;
  status: string | null;
  checkpoint: string | null;
  skill: string | null;
  step: string | null;
}

/**
 * Whether `next` replaces `kept`: one of another run, or of the same run at a later offset or the same one (a later
 * activation of the same log). Another run's snapshot is normally the new run's (a run publishes until it is reset or
 * ends); a late one of the run it replaced lasts until the new run's next, and snapshotAgrees keeps reads from using it.
 * A snapshot that names no run is ordered by its offset alone. lib/live/redis.ts applies the same rule in Lua.
 */
export function supersedes(next: TurnSnapshot, kept: TurnSnapshot | undefined): boolean {
  if (!kept) return true;
  const otherRun = next.runId !== undefined && kept.runId !== undefined && next.runId !== kept.runId;
  return otherRun || next.offset >= kept.offset;
}

/**
 * Whether a snapshot may stand for the turn Temporal describes: it must be of the run described (when it names one),
 * and show the same status, pending checkpoint, skill and step as the search attributes the workflow upserted. A
 * snapshot older than what describe says differs in one of them (each change of status, checkpoint or plan position
 * upserts its attribute), and so does one taken in an activation Temporal has not yet completed; either way the caller
 * asks the workflow instead. So does a snapshot of another run: of a run reset since (its new run has published
 * nothing yet), or a late one of it.
 */
export function snapshotAgrees(snapshot: TurnSnapshot, described: DescribedPosition): boolean {
  const { state } = snapshot;
  return (
    (snapshot.runId === undefined || snapshot.runId === described.runId) &&
    state.status === (described.status ?? 'running') &&
    (state.pendingCheckpoint?.name ?? null) === described.checkpoint &&
    (state.skill ?? null) === described.skill &&
    (state.step ?? null) === described.step
  );
}
