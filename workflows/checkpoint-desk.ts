import { ApplicationFailure, condition, log, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import {
  CheckpointErrorType,
  checkpointToolDefinition,
  decisionProblem,
  decisionResult,
  parseCheckpointRequest,
  type CheckpointDecision,
  type PendingCheckpoint,
} from '../core/checkpoints';
import { answerCheckpointUpdate, checkpointDecisionSignal } from './definitions';
import { searchAttributes } from './search-attributes';
import { toolError, type ToolOutcome, type TurnTool } from './tool-types';
import type { TurnRun } from './turn-run';

export interface CheckpointPolicy {
  ttlMs: number | null;
  onTimeout: 'cancel' | 'skip' | 'approve-defaults';
}

/** Decides what a checkpoint may do (the orchestrator refuses some) and how long it waits. */
export interface CheckpointRules {
  policyFor(name: string): CheckpointPolicy;
  /** A message refusing the checkpoint now (the plan does not allow it), or undefined. */
  refusal?(name: string): string | undefined;
  /** Told of every resolution (and of expiries whose policy lets the turn go on), so the plan can advance. */
  onResolved?(checkpoint: PendingCheckpoint, decision: CheckpointDecision | 'expired'): void;
  /** Options the engine imposes (a routing checkpoint's declared routes), replacing the model's. */
  optionsFor?(name: string): string[] | undefined;
}

/**
 * Serves request_human_approval: one pending checkpoint at a time, each with a server-assigned id, resolved by the
 * human's decision (signal or update) or by its deadline.
 */
export class CheckpointDesk {
  private count = 0;
  private decision: CheckpointDecision | undefined;

  constructor(
    private readonly run: TurnRun,
    private readonly rules: CheckpointRules,
  ) {
    setHandler(checkpointDecisionSignal, (decision) => {
      const problem = this.rejection(decision);
      if (problem) {
        log.warn('Ignored an invalid checkpoint decision signal', { problem: problem.message, decision });
        return;
      }
      this.decision = decision;
    });
    setHandler(
      answerCheckpointUpdate,
      (decision) => {
        this.decision = decision;
        return { checkpointId: decision.checkpointId, action: decision.action };
      },
      {
        validator: (decision) => {
          const problem = this.rejection(decision);
          if (problem) throw problem;
        },
      },
    );
  }

  private get pending(): PendingCheckpoint | null {
    return this.run.state.pendingCheckpoint;
  }

  private rejection(decision: CheckpointDecision): ApplicationFailure | undefined {
    const id = decision?.checkpointId;
    const pending = this.pending;
    if (typeof id !== 'string' || !/^cp-\d+$/.test(id) || Number(id.slice(3)) > this.count) {
      return ApplicationFailure.nonRetryable(`This turn has no checkpoint ${JSON.stringify(id)}.`, CheckpointErrorType.notFound);
    }
    if (!pending || pending.id !== id || this.decision) {
      return ApplicationFailure.nonRetryable(`Checkpoint ${id} is no longer pending.`, CheckpointErrorType.notPending);
    }
    const problem = decisionProblem(pending, decision);
    return problem ? ApplicationFailure.nonRetryable(problem, CheckpointErrorType.invalidDecision) : undefined;
  }

  tool(): TurnTool {
    return { definition: checkpointToolDefinition, run: (input) => this.ask(input) };
  }

  private async ask(input: unknown): Promise<ToolOutcome> {
    const request = parseCheckpointRequest(input);
    if (typeof request === 'string') return toolError(request);
    const refusal = this.rules.refusal?.(request.checkpoint);
    if (refusal) return toolError(refusal);

    const policy = this.rules.policyFor(request.checkpoint);
    const now = Date.now();
    const checkpoint: PendingCheckpoint = {
      id: `cp-${++this.count}`,
      name: request.checkpoint,
      kind: request.kind,
      summary: request.summary,
      params: request.params ?? null,
      options: this.rules.optionsFor?.(request.checkpoint) ?? request.options ?? null,
      requestedAt: new Date(now).toISOString(),
      expiresAt: policy.ttlMs === null ? null : new Date(now + policy.ttlMs).toISOString(),
    };
    this.decision = undefined;
    this.run.state.pendingCheckpoint = checkpoint;
    upsertSearchAttributes([{ key: searchAttributes.checkpoint, value: checkpoint.name }]);
    this.run.emit({ type: 'checkpoint.requested', checkpoint });
    this.run.setStatus('waiting');

    const answered = policy.ttlMs === null ? (await condition(() => this.decision !== undefined), true) : await condition(() => this.decision !== undefined, policy.ttlMs);
    this.run.state.pendingCheckpoint = null;
    upsertSearchAttributes([{ key: searchAttributes.checkpoint, value: null }]);
    const outcome = answered ? this.resolved(checkpoint, this.decision!) : this.expired(checkpoint, policy);
    if (!outcome.endTurn) this.run.setStatus('running');
    return outcome;
  }

  private resolved(checkpoint: PendingCheckpoint, decision: CheckpointDecision): ToolOutcome {
    const by = typeof decision.by === 'string' && decision.by ? decision.by : 'unknown';
    this.run.emit({ type: 'checkpoint.resolved', checkpointId: checkpoint.id, action: decision.action, by });
    this.rules.onResolved?.(checkpoint, decision);
    const result = decisionResult(decision);
    return { content: JSON.stringify(result), isError: false, result, humanDecision: true, cancelled: decision.action === 'cancel' };
  }

  private expired(checkpoint: PendingCheckpoint, policy: CheckpointPolicy): ToolOutcome {
    this.run.emit({ type: 'checkpoint.expired', checkpointId: checkpoint.id });
    if (policy.onTimeout !== 'cancel') this.rules.onResolved?.(checkpoint, 'expired');
    if (policy.onTimeout === 'approve-defaults' && checkpoint.kind === 'approval') {
      const result = { approved: true, defaulted: true, note: 'Nobody answered in time; the proposed params stand as they are.' };
      return { content: JSON.stringify(result), isError: false, result };
    }
    if (policy.onTimeout === 'skip' || policy.onTimeout === 'approve-defaults') {
      const result = { skipped: true, note: 'Nobody answered in time. Go on without this decision, and tell the user it was skipped.' };
      return { content: JSON.stringify(result), isError: false, result };
    }
    return {
      content: JSON.stringify({ expired: true }),
      isError: false,
      endTurn: { status: 'cancelled', reason: 'expired', output: `Checkpoint ${checkpoint.name} expired before anyone answered.` },
    };
  }
}
