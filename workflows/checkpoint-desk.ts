import {
  ApplicationFailure,
  CancellationScope,
  condition,
  getExternalWorkflowHandle,
  log,
  workflowInfo,
} from '@temporalio/workflow';
import { CheckpointErrorType, type CheckpointDecision, type PendingCheckpoint } from '../core/checkpoints';
import { answerAheadOf, answerAheadOutcome, type AnswerAhead, type CheckpointPlan } from '../core/policy';
import { answer, expire, type AnswerRejection, type AnswerStep } from '../core/run/answers';
import type { CheckpointOutcome } from '../core/run/commands';
import { checkpointDecisionSignal } from './definitions';
import { searchAttributes } from './search-attributes';
import type { TurnRun } from './turn-run';

/**
 * Human checkpoints in workflow code: publishing the one the policy opened, waiting for an answer or the deadline,
 * and carrying out what the run machine made of it (core/run/answers.ts). What an answer may be and what it means is
 * the machine's.
 */

const errorTypes: Record<AnswerRejection['code'], string> = {
  refused: CheckpointErrorType.invalidDecision,
  not_found: CheckpointErrorType.notFound,
  not_pending: CheckpointErrorType.notPending,
  invalid_decision: CheckpointErrorType.invalidDecision,
};

/** The failure an update rejects an answer with (details: the problems). */
function failureOf(rejection: AnswerRejection): ApplicationFailure {
  const { message, code, problems } = rejection;
  return ApplicationFailure.nonRetryable(message, errorTypes[code], ...(problems ? [problems] : []));
}

/** An answer checked and applied now, as one reduction of the run machine: its step, or why it cannot be taken. */
export function answerNow(run: TurnRun, decision: CheckpointDecision): AnswerStep | AnswerRejection {
  return answer(run.machine, decision, Date.now());
}

/** Why an answer cannot be taken now, as the failure the update rejects with, or undefined (nothing is applied). */
export function decisionRejection(run: TurnRun, decision: CheckpointDecision): ApplicationFailure | undefined {
  const checked = answerNow(run, decision);
  return checked.kind === 'rejected' ? failureOf(checked) : undefined;
}

/**
 * Takes an answer (a handler's): applied to the run at once, so a second answer to the same checkpoint is no longer
 * pending; one to the checkpoint of a skill run below is passed down to it: the promise of that. An answer its
 * validator could not check (a signal's) that cannot be taken is thrown.
 */
export function takeAnswer(run: TurnRun, decision: CheckpointDecision): Promise<void> | undefined {
  const step = answerNow(run, decision);
  if (step.kind === 'rejected') throw failureOf(step);
  return carryOut(run, step);
}

function carryOut(run: TurnRun, step: AnswerStep): Promise<void> | undefined {
  const lead = run.take(step);
  return lead?.kind === 'pass_answer_down' ? passDown(lead.workflowId, lead.decision) : undefined;
}

/**
 * Takes an answer sent by signal (operators, by hand; a turn passing one down): checked and applied in one reduction;
 * one that cannot be taken is logged and ignored.
 */
export function takeSignalled(run: TurnRun, decision: CheckpointDecision): Promise<void> | undefined {
  const step = answerNow(run, decision);
  if (step.kind === 'rejected') {
    log.warn('Ignored an invalid checkpoint decision signal', { problem: step.message, decision });
    return undefined;
  }
  return carryOut(run, step);
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
  await takeAnswer(run, decision);
}

/**
 * Asks a human: the checkpoint is pending (turn state, search attribute, event, status waiting) until an answer is taken
 * (takeAnswer, in the handler that got it) or its deadline passes; then the call that asked goes on with what the run
 * machine made of it.
 */
export async function askHuman(run: TurnRun, ask: CheckpointPlan): Promise<CheckpointOutcome> {
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
  run.awaited = undefined;
  run.state.pendingCheckpoint = pending;
  run.setAttributes([{ key: searchAttributes.checkpoint, value: pending.name }]);
  run.publishDetails();
  run.emit({ type: 'checkpoint.requested', checkpoint: pending });
  run.setStatus('waiting');

  const answered = () => run.awaited !== undefined;
  if (ask.ttlMs === null) await condition(answered);
  else await condition(answered, ask.ttlMs);
  if (run.awaited === undefined) run.take(expire(run.machine, pending.id, Date.now()));
  const outcome = run.awaited!;
  run.awaited = undefined;
  return outcome;
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
