/**
 * Why a turn or a skill run ended the way it did, when that is not simply "the model answered" (docs/events.md,
 * "Reasons"). One union for every ending the engine builds (core/run/endings.ts), grouped by the status it goes with.
 */

/** Completed, with an output all the same. */
export const completedReasons = ['max_tokens', 'max_rounds', 'empty_response'] as const;

export const failedReasons = [
  'refusal',
  'context_window_exceeded',
  'plan_violations',
  'max_rounds',
  'skill_limit',
  'invalid_output',
  'token_budget',
  'invalid_params',
  'model_error',
  'internal_error',
  'terminated',
  'timed_out',
  'workflow_failed',
] as const;

export const cancelledReasons = ['cancelled', 'cancelled_by_user', 'expired'] as const;

export type CompletedReason = (typeof completedReasons)[number];
export type FailedReason = (typeof failedReasons)[number];
export type CancelledReason = (typeof cancelledReasons)[number];
export type Reason = CompletedReason | FailedReason | CancelledReason;
