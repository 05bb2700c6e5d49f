import type { TerminalEvent } from '../core/events';
import { closedTurnEnding, type Closure } from '../core/run/skill-result';
import type { TurnError, TurnStatus } from '../core/turn';

export interface ClosedTurnEnding {
  status: Exclude<TurnStatus, 'running' | 'waiting'>;
  reason: string;
  error: TurnError | null;
}

const closureOfStatus: Record<string, Closure> = {
  TERMINATED: { kind: 'terminated' },
  TIMED_OUT: { kind: 'timed_out' },
  CANCELLED: { kind: 'cancelled' },
};

/**
 * How a turn whose workflow Temporal closed by itself (terminated, timed out, cancelled before it ran, failed)
 * ended: such a turn has no ending in its own state or log, so the API derives one from the execution status, as its
 * session records it (closedTurnEnding).
 */
export function endingOfClosedWorkflow(statusName: string, failureMessage?: string): ClosedTurnEnding {
  const closure: Closure | undefined =
    statusName === 'FAILED'
      ? { kind: 'failed', message: failureMessage ?? 'The turn failed.' }
      : closureOfStatus[statusName];
  if (!closure) {
    const code = statusName.toLowerCase();
    return { status: 'failed', reason: code, error: { code, message: 'The turn ended unexpectedly.' } };
  }
  const { status, reason, error } = closedTurnEnding(closure);
  return { status, reason, error: error ?? null };
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
