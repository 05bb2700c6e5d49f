import type { TerminalEvent } from '../core/events';
import type { TurnError, TurnStatus } from '../core/turn';

export interface ClosedTurnEnding {
  status: Exclude<TurnStatus, 'running' | 'waiting'>;
  reason: string;
  error: TurnError | null;
}

/**
 * How a turn whose workflow Temporal closed by itself (terminated, timed out, cancelled before it ran, failed)
 * ended: such a turn has no ending in its own state or log, so the API derives one from the execution status.
 */
export function endingOfClosedWorkflow(statusName: string, failureMessage?: string): ClosedTurnEnding {
  switch (statusName) {
    case 'TERMINATED':
      return {
        status: 'failed',
        reason: 'terminated',
        error: { code: 'terminated', message: 'The turn was terminated in Temporal.' },
      };
    case 'TIMED_OUT':
      return {
        status: 'failed',
        reason: 'timed_out',
        error: { code: 'timed_out', message: 'The turn timed out in Temporal.' },
      };
    case 'CANCELLED':
      return { status: 'cancelled', reason: 'cancelled', error: null };
    case 'FAILED':
      return {
        status: 'failed',
        reason: 'workflow_failed',
        error: { code: 'workflow_failed', message: failureMessage ?? 'The turn failed.' },
      };
    default:
      return {
        status: 'failed',
        reason: statusName.toLowerCase(),
        error: { code: statusName.toLowerCase(), message: 'The turn ended unexpectedly.' },
      };
  }
}

export function terminalEventOf(ending: {
  status: TurnStatus;
  reason?: string | null;
  error?: TurnError | null;
  output?: string | null;
}): TerminalEvent {
  if (ending.status === 'completed') return { type: 'done', output: ending.output ?? '' };
  if (ending.status === 'cancelled') return { type: 'cancelled', reason: ending.reason ?? 'cancelled' };
  return {
    type: 'error',
    code: ending.error?.code ?? ending.reason ?? 'failed',
    message: ending.error?.message ?? 'The turn failed.',
  };
}
