import type { TurnState } from './turn';

/**
 * A turn's state as its worker last published it, with the offset of the last event in its log when it was taken:
 * what `GET /v1/turns/:id` shows for a running turn without asking the worker (docs/api.md).
 */
export interface TurnSnapshot {
  offset: number;
  state: TurnState;
}

/** What DescribeWorkflowExecution says of a running turn: its search attributes (null when unset). */
export interface DescribedPosition {
  status: string | null;
  checkpoint: string | null;
  skill: string | null;
  step: string | null;
}

/** Whether `next` replaces `kept`: a later offset, or the same one (a later activation of the same log). */
export function supersedes(next: TurnSnapshot, kept: TurnSnapshot | undefined): boolean {
  return !kept || next.offset >= kept.offset;
}

/**
 * Whether a snapshot may stand for the turn Temporal describes: it must show the same status, pending checkpoint,
 * skill and step as the search attributes the workflow upserted. A snapshot older than what describe says differs in
 * one of them (each change of status, checkpoint or plan position upserts its attribute), and so does one taken in an
 * activation Temporal has not yet completed; either way the caller asks the workflow instead.
 */
export function snapshotAgrees(snapshot: TurnSnapshot, described: DescribedPosition): boolean {
  const { state } = snapshot;
  return (
    state.status === (described.status ?? 'running') &&
    (state.pendingCheckpoint?.name ?? null) === described.checkpoint &&
    (state.skill ?? null) === described.skill &&
    (state.step ?? null) === described.step
  );
}
