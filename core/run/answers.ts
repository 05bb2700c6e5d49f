import type { CheckpointDecision, DecisionProblem } from '../checkpoints';
import { reducePolicy } from '../policy/reduce';
import type { RefusalCode, Verdict } from '../policy/types';
import type { CheckpointOutcome, RunCommand, RunStep, ToolAnswer } from './commands';
import type { RunState } from './state';

/** Why an answer to a checkpoint cannot be taken: the checkpoint is unknown, settled, or the answer invalid. */
export interface AnswerRejection {
  kind: 'rejected';
  /** `refused`: the policy refuses the answer itself (an invalid decision). */
  code: RefusalCode;
  message: string;
  problems?: DecisionProblem[];
}

export type AnswerStep = RunStep & { kind: 'taken' };

/**
 * A human's answer to the checkpoint the run shows, checked and applied in one reduction: an update's validator calls
 * it for the rejection (and keeps nothing), the update's or signal's handler for the state and the commands. An answer
 * to the run's own checkpoint settles it at once, so a second answer to it is no longer pending; one to the checkpoint
 * of a skill run below (mirrored here) is settled here and passed down to that run.
 */
export function answer(state: RunState, decision: CheckpointDecision, at: number): AnswerStep | AnswerRejection {
  const { state: policy, verdict } = reducePolicy(state.policy, { type: 'checkpoint.resolved', at, decision });
  if (verdict.kind === 'refuse') {
    const { code, message, problems } = verdict;
    return { kind: 'rejected', code, message, ...(problems ? { problems } : {}) };
  }
  const { mirrored } = state;
  if (mirrored && decision.checkpointId === mirrored.checkpoint.id) {
    const { workflowId } = mirrored;
    const forwarded = [...state.forwarded, decision.checkpointId];
    return {
      kind: 'taken',
      state: { ...state, policy, forwarded, mirrored: null },
      commands: [
        { kind: 'show_checkpoint', checkpoint: null, askedBy: null },
        { kind: 'set_status', status: 'running' },
        { kind: 'pass_answer_down', workflowId, decision },
      ],
    };
  }
  const by = typeof decision.by === 'string' && decision.by ? decision.by : 'unknown';
  return {
    kind: 'taken',
    state: { ...state, policy },
    commands: [
      { kind: 'show_checkpoint', checkpoint: null, askedBy: null },
      {
        kind: 'emit',
        event: { type: 'checkpoint.resolved', checkpointId: decision.checkpointId, action: decision.action, by },
      },
      ...settled(verdict),
    ],
  };
}

/** Nobody answered the run's own checkpoint in time: what its expiry policy says, for the call that asked it. */
export function expire(state: RunState, checkpointId: string, at: number): RunStep {
  const { state: policy, verdict } = reducePolicy(state.policy, { type: 'checkpoint.expired', at });
  return {
    state: { ...state, policy },
    commands: [
      { kind: 'show_checkpoint', checkpoint: null, askedBy: null },
      { kind: 'emit', event: { type: 'checkpoint.expired', checkpointId } },
      ...settled(verdict),
    ],
  };
}

/**
 * The policy's word on a settled checkpoint, for the call that asked it: the plan may have moved, the run goes on
 * (unless it ends now, without a last word), and the call gets the decision's result.
 */
function settled(verdict: Verdict): RunCommand[] {
  const outcome = outcomeOf(verdict);
  const endsNow = outcome.kind === 'ended' && !outcome.end.lastWord;
  return [
    { kind: 'publish_position' },
    ...(endsNow ? [] : [{ kind: 'set_status', status: 'running' } as const]),
    { kind: 'resume_call', outcome },
  ];
}

function outcomeOf(verdict: Verdict): CheckpointOutcome {
  if (verdict.kind === 'refuse') return { kind: 'answered', answer: resultAnswer({ refused: verdict.message }) };
  const answer = resultAnswer(verdict.result);
  if (verdict.kind === 'end') return { kind: 'ended', answer, end: verdict };
  if (verdict.input) return { kind: 'approved', input: verdict.input, note: verdict.note ?? null };
  return { kind: 'answered', answer };
}

const resultAnswer = (result: unknown): ToolAnswer => ({ content: JSON.stringify(result), isError: false, result });
