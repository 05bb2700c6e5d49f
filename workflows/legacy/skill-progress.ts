import { CancellationScope, condition, getExternalWorkflowHandle, log, patched } from '@temporalio/workflow';
import { separatePatches } from './core/policy';
import type { PendingCheckpoint } from './core/checkpoints';
import type { TurnEventBody } from './core/events';
import type { SkillProgress } from './core/skill-runs';
import { skillProgressSignal } from './definitions';
import type { TurnRun } from './turn-run';

/**
 * How a skill run and the run that invoked it stay in step: the skill run relays what it emits (with its depth), the
 * checkpoint it waits at, its usage and the records of the runs under it, in order, by signal; the parent appends the
 * events to its own log (and so to its turn's stream), mirrors the checkpoint as its own pending one, and counts the
 * usage. A turn's log, state and search attributes thus show everything under it.
 */

/** Status and terminal events stay in the skill run's own log: the turn's stream has its own. */
const ownOnly: ReadonlySet<TurnEventBody['type']> = new Set(['status', 'done', 'error', 'cancelled']);

/** The skill run's side: sends its progress to its parent whenever it has emitted something, one signal at a time. */
export class ProgressRelay {
  private outbox: TurnEventBody[] = [];
  private seq = 0;
  private dirty = false;
  private closed = false;
  private parentGone = false;
  private inFlight = false;
  private readonly sending: Promise<void>;

  constructor(
    private readonly run: TurnRun,
    private readonly parentWorkflowId: string,
  ) {
    run.onEmit = (event) => {
      if (!ownOnly.has(event.type)) this.outbox.push(event);
      this.dirty = true;
    };
    // It outlives a cancellation of the run: what the run did until then still reaches the parent.
    this.sending = CancellationScope.nonCancellable(() => this.loop());
  }

  /** Sends what is left, then stops. */
  async close(): Promise<void> {
    this.closed = true;
    await this.sending;
  }

  private async loop(): Promise<void> {
    for (;;) {
      await condition(() => this.dirty || this.closed);
      if (!this.dirty) return;
      this.dirty = false;
      this.inFlight = true;
      await this.send();
      this.inFlight = false;
    }
  }

  /** The last progress number the parent got, once it got everything; undefined while something is on its way. */
  settledSeq(): number | undefined {
    return this.dirty || this.inFlight || this.outbox.length > 0 ? undefined : this.seq;
  }

  private async send(): Promise<void> {
    const events = this.outbox.splice(0);
    if (this.parentGone) return;
    const { state, policy } = this.run;
    const progress: SkillProgress = {
      workflowId: this.run.input.turnId,
      seq: ++this.seq,
      events,
      status: state.status,
      pendingCheckpoint: state.pendingCheckpoint,
      usage: state.usage,
      checkpointCount: policy.checkpointCount,
      skills: state.skills ?? [],
    };
    try {
      await getExternalWorkflowHandle(this.parentWorkflowId).signal(skillProgressSignal, progress);
    } catch (err) {
      this.parentGone = true;
      log.warn('The run that invoked this skill run is gone; its progress is no longer sent', {
        parent: this.parentWorkflowId,
        error: String(err),
      });
    }
  }
}

/** The parent's side: takes a skill run's progress (once, in order) into its own log, state and policy. */
export function absorbProgress(run: TurnRun, progress: SkillProgress): void {
  const link = run.children.get(progress?.workflowId);
  if (!link || progress.seq <= link.seq) return;
  link.seq = progress.seq;
  for (const event of progress.events) run.relay(event);
  run.setChildUsage(progress.workflowId, progress.usage);
  const own = run.state.skills?.find((record) => record.workflowId === progress.workflowId);
  run.recordSkillRuns([
    ...progress.skills,
    ...(own && !own.endedAt ? [{ ...own, status: progress.status, usage: progress.usage }] : []),
  ]);
  const pending =
    progress.pendingCheckpoint && !link.forwarded.has(progress.pendingCheckpoint.id)
      ? progress.pendingCheckpoint
      : null;
  mirrorCheckpoint(run, pending, progress.workflowId, progress.checkpointCount);
}

/**
 * Mirrors the checkpoint a skill run waits at as this run's pending one (or clears it), with the status to match. A
 * run asked to cancel runs no more: it keeps its status, and the checkpoint it shows, until its ending publishes
 * `cancelled` with none (runs of code before cancelKeepsCheckpoint cleared the checkpoint at once, showing `waiting`
 * without one). The policy learns at once that the checkpoint is gone: an answer to it meanwhile is refused.
 */
export function mirrorCheckpoint(
  run: TurnRun,
  pending: PendingCheckpoint | null,
  skillRun: string,
  checkpointCount: number,
): void {
  const changed = (run.state.pendingCheckpoint?.id ?? null) !== (pending?.id ?? null);
  if (!changed && checkpointCount <= run.policy.checkpointCount) return;
  run.decide({ type: 'checkpoint.delegated', checkpoint: pending, checkpointCount });
  if (!changed) return;
  if (!pending && run.cancelRequested() && patched(separatePatches.cancelKeepsCheckpoint)) return;
  run.showPending(pending, skillRun);
  if (pending) run.setStatus('waiting');
  else if (!run.cancelRequested()) run.setStatus('running');
}
