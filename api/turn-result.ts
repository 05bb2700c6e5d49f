import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { turnResultOfFailure, type TurnResult } from '../core/turn';

/**
 * How a closed turn workflow ended: its result when it completed, or when it failed because the turn ended `failed`
 * (the result is the failure's detail); else the failure (terminated, timed out, or failed for another reason).
 */
export async function closedTurnOutcome(
  handle: WorkflowHandle,
): Promise<{ result: TurnResult } | { failure: unknown }> {
  try {
    return { result: (await handle.result()) as TurnResult };
  } catch (err) {
    const result = resultOfTurnFailure(err);
    return result ? { result } : { failure: err };
  }
}

/** The TurnResult a turn workflow's `TurnFailed` failure carries; undefined for any other error. */
export function resultOfTurnFailure(err: unknown): TurnResult | undefined {
  if (!(err instanceof WorkflowFailedError) || !(err.cause instanceof ApplicationFailure)) return undefined;
  return turnResultOfFailure(err.cause.type ?? undefined, err.cause.details ?? undefined);
}
