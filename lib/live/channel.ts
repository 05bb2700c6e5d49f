/**
 * Live events: what a turn shows while the model generates (`message.delta`, `thinking.delta`), and the hint that its
 * durable log grew (`log.appended`, so streams read it at once instead of waiting for their next poll). They are never
 * in the turn's durable log; a listener that is not connected when one is published never sees it.
 */
export type LiveEvent = DeltaEvent | LogAppendedEvent;

export interface LogAppendedEvent {
  type: 'log.appended';
  offset: number;
}

export interface DeltaEvent {
  type: 'message.delta' | 'thinking.delta';
  text: string;
  /** The model call that produced it (its activity id within the turn) and that call's attempt: a retried call
   * streams again from the start, so a higher attempt replaces the text of the earlier one. */
  call?: string;
  attempt?: number;
  /** From a skill run this many levels under the turn. */
  depth?: number;
}

export type LiveListener = (event: LiveEvent) => void;

/** Publish never blocks, never throws, and drops the event when nobody listens. */
export interface LiveChannel {
  publish(turnId: string, event: LiveEvent): void;
  /** Returns the unsubscribe function. */
  subscribe(turnId: string, listener: LiveListener): () => void;
  close(): Promise<void>;
}

export function isLiveEvent(value: unknown): value is LiveEvent {
  if (!value || typeof value !== 'object') return false;
  const event = value as Record<string, unknown>;
  if (event.type === 'log.appended') return typeof event.offset === 'number' && Number.isInteger(event.offset);
  return (
    (event.type === 'message.delta' || event.type === 'thinking.delta') &&
    typeof event.text === 'string' &&
    (event.call === undefined || typeof event.call === 'string') &&
    (event.attempt === undefined || (typeof event.attempt === 'number' && Number.isInteger(event.attempt)))
  );
}
