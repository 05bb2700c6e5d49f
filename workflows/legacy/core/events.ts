import type { TurnEventBody } from './schemas/events';

/**
 * The turn's event catalogue (docs/events.md), defined in `schemas/events.ts`. Every event gets an offset in the
 * turn's log; `message.delta` and `thinking.delta` are live only, everything else is kept in the durable log.
 */
export type { TurnEventBody };

export type TurnEvent = TurnEventBody & { offset: number; at: string };

export type TerminalEvent = Extract<TurnEventBody, { type: 'done' | 'error' | 'cancelled' }>;

export const liveOnlyEventTypes: ReadonlySet<TurnEventBody['type']> = new Set(['message.delta', 'thinking.delta']);

/** The result in the `tool.end` of a call a cancel cut: the run ends, so the model never sees it. */
export const cancelledCallResult = { cancelled: 'turn cancelled' } as const;

/** Whether a `tool.end` result is that of a call a cancel cut. */
export function isCancelledCallResult(result: unknown): boolean {
  return (
    typeof result === 'object' &&
    result !== null &&
    (result as { cancelled?: unknown }).cancelled === cancelledCallResult.cancelled
  );
}

export function isTerminalEvent(event: { type: string }): boolean {
  return event.type === 'done' || event.type === 'error' || event.type === 'cancelled';
}
