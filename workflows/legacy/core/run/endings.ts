import { contextExceededMessage, emptyRecoveryAnswer, refusalMessage } from '../guidance';
import type { TurnError } from '../schemas/turn';
import type { CancelledReason, CompletedReason, FailedReason } from './reasons';

/**
 * Every way a turn or a skill run ends, built here and nowhere else: a status, the reason from the one `Reason` union,
 * and the error or output that goes with it. Workflow code picks a constructor; it never writes an ending itself.
 */

export interface CompletedEnding {
  status: 'completed';
  reason?: CompletedReason;
  output?: string;
}

export interface FailedEnding {
  status: 'failed';
  reason: FailedReason;
  error: TurnError;
  output?: string;
}

export interface CancelledEnding {
  status: 'cancelled';
  reason: CancelledReason;
  output?: string;
}

export type Ending = CompletedEnding | FailedEnding | CancelledEnding;

/** The model's answer; `cut` when the output limit cut it more often than the run may continue it. */
export function answeredEnding(output: string, cut?: 'max_tokens'): CompletedEnding {
  return { status: 'completed', output, ...(cut ? { reason: cut } : {}) };
}

/** Completed without the model's own answer (the round budget ran out with no plan: a last word gives the output). */
export function completedEnding(reason: CompletedReason): CompletedEnding {
  return { status: 'completed', reason };
}

/** The model answered with nothing more often than the run retries: the output is a recovery message. */
export function emptyResponseEnding(): CompletedEnding & { output: string } {
  return { status: 'completed', reason: 'empty_response', output: emptyRecoveryAnswer };
}

/** A failure of the engine's own rules, its error code the reason. */
export function failedEnding(reason: FailedReason, message: string, output?: string): FailedEnding {
  return { status: 'failed', reason, error: { code: reason, message }, ...(output ? { output } : {}) };
}

/** The model declined: what it said, if anything, is the output. */
export function refusalEnding(said: string): FailedEnding {
  return {
    status: 'failed',
    reason: 'refusal',
    output: said || undefined,
    error: { code: 'refusal', message: refusalMessage },
  };
}

export function contextExceededEnding(): FailedEnding {
  return {
    status: 'failed',
    reason: 'context_window_exceeded',
    error: { code: 'context_window_exceeded', message: contextExceededMessage },
  };
}

/** The run's code threw: the model's call failed for good (`model_error`), or anything else did (`internal_error`). */
export function thrownEnding(source: 'model' | 'other', error: TurnError): FailedEnding {
  return { status: 'failed', reason: source === 'model' ? 'model_error' : 'internal_error', error };
}

/** A turn started with a skill and parameters that are not the skill's. */
export function invalidParamsEnding(skill: string, problems: Array<{ message: string }>): FailedEnding {
  const message = `The parameters given for skill ${skill} are not valid: ${problems.map((problem) => problem.message).join('; ')}.`;
  return failedEnding('invalid_params', message);
}

/** A skill run that declares an output ended (as `reason` says) without a valid one: failed after all. */
export function missingOutputEnding(skill: string, ended: { reason?: string; output?: string }): FailedEnding {
  const message = `Skill ${skill} declares a structured output, and its run ended (${ended.reason ?? 'completed'}) without a valid one.`;
  return {
    status: 'failed',
    reason: 'invalid_output',
    output: ended.output,
    error: { code: 'invalid_output', message },
  };
}

/** Cancelled: through the API or Temporal (`cancelled`), by the human at a checkpoint, or by a checkpoint's expiry. */
export function cancelledEnding(reason: CancelledReason = 'cancelled', output?: string): CancelledEnding {
  return { status: 'cancelled', reason, ...(output ? { output } : {}) };
}

/** The tool result of a call on which the run ended: the failure's message, or that it ended. */
export function endedCallMessage(ending: Ending): string {
  return ending.status === 'failed' ? ending.error.message : 'The turn ended.';
}
