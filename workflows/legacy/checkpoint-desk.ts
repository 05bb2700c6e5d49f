import {
  ApplicationFailure,
  CancellationScope,
  condition,
  getExternalWorkflowHandle,
  log,
  workflowInfo,
} from '@temporalio/workflow';
import { CheckpointErrorType, type CheckpointDecision, type PendingCheckpoint } from './core/checkpoints';
import { answerAheadOf, answerAheadOutcome, type AnswerAhead, type CheckpointPlan, type Verdict } from './core/policy';
import { answerRejection, type AnswerRejection } from './core/run/answers';
import { checkpointDecisionSignal } from './definitions';
import type { AnsweredCall } from './tool-types';
import { searchAttributes } from './search-attributes';
import type { TurnRun } from './turn-run';

/**
 * Human checkpoints in workflow code: publishing the one the policy opened, waiting for a decision or the deadline,
 * and telling the policy what happened. What a decision may be and what it means is the policy's (core/policy).
 */

const errorTypes: Record<AnswerRejection['code'], string> = {
  refused: CheckpointErrorType.invalidDecision,
  not_found: CheckpointErrorType.notFound,
  not_pending: CheckpointErrorType.notPending,
  invalid_decision: CheckpointErrorType.invalidDecision,
};

/** Why a decision cannot be taken now, as the failure the update rejects with (details: the problems), or undefined. */
export function decisionRejection(run: TurnRun, decision: CheckpointDecision): ApplicationFailure | undefined {
  const rejection = answerRejection(run.policy, run.decision, decision, Date.now());
  if (!rejection) return undefined;
  const { message, code, problems } = rejection;
  return ApplicationFailure.nonRetryable(message, errorTypes[code], ...(problems ? [problems] : []));
}

/**
 * The update validator's check: an answer for the checkpoint the turn opens next passes, to wait for it
 * (core/policy/answers-ahead.ts); any other is checked now.
 */
export function updateRejection(run: TurnRun, decision: CheckpointDecision): ApplicationFailure | undefined {
  return answerAhead(run, decision) ? undefined : decisionRejection(run, decision);
}

/** The answer as one that came ahead of its checkpoint (in the update handler: the validator let it in for that), or null. */
export function answerAhead(run: TurnRun, decision: CheckpointDecision): AnswerAhead | null {
  return answerAheadOf(run.policy, decision, workflowInfo().historyLength);
}

/**
 * Takes an answer that came ahead of its checkpoint once the turn has numbered it, checked like any other; refuses it
 * once the turn cannot open it any more. The SDK evaluates conditions after each job of an activation, before the
 * workflow code that job resumes: a later activation refuses the answer before the turn can open anything in it. Not
 * cancellable: a cancelled turn ends, and the answer is refused for that.
 */
export async function takeAnswerAhead(run: TurnRun, decision: CheckpointDecision, ahead: AnswerAhead): Promise<void> {
  const outcome = () =>
    answerAheadOutcome(run.policy, ahead, { activation: workflowInfo().historyLength, ended: run.ended });
  await CancellationScope.nonCancellable(() => condition(() => outcome().kind !== 'wait'));
  const settled = outcome();
  if (settled.kind === 'refuse') throw ApplicationFailure.nonRetryable(settled.message, CheckpointErrorType.notPending);
  const rejection = decisionRejection(run, decision);
  if (rejection) throw rejection;
  await takeDecision(run, decision);
}

/**
 * Asks a human: the checkpoint is pending (turn state, search attribute, event, status waiting) until a decision
 * arrives or its deadline passes; then the policy decides what that means, the model gets it as the tool result, and
 * the turn runs on unless it ends now.
 */
export async function askHuman(run: TurnRun, ask: CheckpointPlan): Promise<AnsweredCall> {
  const requestedAt = Date.now();
  const pending: PendingCheckpoint = {
    id: ask.id,
    name: ask.name,
    kind: ask.kind,
    summary: ask.summary,
    params: ask.params,
    paramsSchema: ask.paramsSchema,
    options: ask.options,
    actions: ask.actions,
    requestedAt: new Date(requestedAt).toISOString(),
    expiresAt: ask.ttlMs === null ? null : new Date(requestedAt + ask.ttlMs).toISOString(),
    ...(ask.tool ? { tool: ask.tool } : {}),
    skill: ask.skill,
    depth: ask.depth,
  };
  run.decision = undefined;
  run.state.pendingCheckpoint = pending;
  run.setAttributes([{ key: searchAttributes.checkpoint, value: pending.name }]);
  run.publishDetails();
  run.emit({ type: 'checkpoint.requested', checkpoint: pending });
  run.setStatus('waiting');

  const decided = () => run.decision !== undefined;
  const answered = ask.ttlMs === null ? (await condition(decided), true) : await condition(decided, ask.ttlMs);
  run.state.pendingCheckpoint = null;
  run.setAttributes([{ key: searchAttributes.checkpoint, value: null }]);
  run.publishDetails();

  let verdict: Verdict;
  if (answered) {
    const decision = run.decision!;
    run.emit({
      type: 'checkpoint.resolved',
      checkpointId: pending.id,
      action: decision.action,
      by: typeof decision.by === 'string' && decision.by ? decision.by : 'unknown',
    });
    verdict = run.decide({ type: 'checkpoint.resolved', at: Date.now(), decision });
  } else {
    run.emit({ type: 'checkpoint.expired', checkpointId: pending.id });
    verdict = run.decide({ type: 'checkpoint.expired', at: Date.now() });
  }
  const endsNow = verdict.kind === 'end' && !verdict.lastWord;
  if (!endsNow) run.setStatus('running');
  // Resolved and expired checkpoints always have a result: the decision, a skip, or the end they caused.
  const result = verdict.kind === 'refuse' ? { refused: verdict.message } : verdict.result;
  if (verdict.kind === 'allow' && verdict.input) {
    return {
      answer: { content: JSON.stringify(result), isError: false, result },
      approved: { input: verdict.input, ...(verdict.note ? { note: verdict.note } : {}) },
    };
  }
  return {
    answer: { content: JSON.stringify(result), isError: false, result },
    ...(verdict.kind === 'end' ? { ends: verdict } : {}),
  };
}

/**
 * Takes a decision the validator accepted: one on this run's own checkpoint is kept for askHuman, at once (handlers
 * that take it stay synchronous, so the commands of turns in flight keep their order); one on the checkpoint of a
 * skill run below (mirrored here) is settled here, so it cannot be taken twice, and passed down: the promise of that.
 */
export function takeDecision(run: TurnRun, decision: CheckpointDecision): Promise<void> | undefined {
  const verdict = run.preview({ type: 'checkpoint.resolved', at: Date.now(), decision });
  if (verdict.kind !== 'allow' || !verdict.forward) {
    run.decision = decision;
    return undefined;
  }
  const skillRun = run.mirroring!;
  run.decide({ type: 'checkpoint.resolved', at: Date.now(), decision });
  run.children.get(skillRun)?.forwarded.add(decision.checkpointId);
  run.showPending(null);
  run.setStatus('running');
  return passDown(skillRun, decision);
}

async function passDown(skillRun: string, decision: CheckpointDecision): Promise<void> {
  try {
    await getExternalWorkflowHandle(skillRun).signal(checkpointDecisionSignal, decision);
  } catch (err) {
    log.warn('A checkpoint decision could not reach its skill run', {
      skillRun,
      error: err instanceof Error ? err.message : String(err),
    });
  }
}
