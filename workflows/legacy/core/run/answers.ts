import type { CheckpointDecision, DecisionProblem } from '../checkpoints';
import { reducePolicy } from '../policy/reduce';
import type { PolicyState, RefusalCode } from '../policy/types';

/** Why an answer to a checkpoint cannot be taken now: the checkpoint is unknown, settled, or the answer invalid. */
export interface AnswerRejection {
  /** `refused`: the policy refuses the answer itself (an invalid decision). */
  code: RefusalCode;
  message: string;
  problems?: DecisionProblem[];
}

/**
 * Whether a run takes an answer now, checked without taking it (an update's validator, a signal's handler): a second
 * answer to the checkpoint whose answer the run already holds (not yet acted on) is refused as no longer pending, and
 * any other answer as the policy would refuse it.
 */
export function answerRejection(
  policy: PolicyState,
  taken: CheckpointDecision | undefined,
  decision: CheckpointDecision,
  at: number,
): AnswerRejection | null {
  if (taken !== undefined && decision?.checkpointId === taken.checkpointId)
    return { code: 'not_pending', message: `Checkpoint ${decision.checkpointId} is no longer pending.` };
  const { verdict } = reducePolicy(policy, { type: 'checkpoint.resolved', at, decision });
  if (verdict.kind !== 'refuse') return null;
  const { code, message, problems } = verdict;
  return { code, message, ...(problems ? { problems } : {}) };
}
