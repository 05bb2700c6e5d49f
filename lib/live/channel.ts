/**
 * Live events: what a turn shows while the model generates (`message.delta`, `thinking.delta`). They are never in the
 * turn's durable log; a listener that is not connected when one is published never sees it.
 */
export interface LiveEvent {
  type: 'message.delta' | 'thinking.delta';
  text: string;
  /** The model call that produced it (its activity id within the turn) and that call's attempt: a retried call
   * streams again from the start, so a higher attempt replaces the text of the earlier one. */
  call?: string;
  attempt?: number;
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
  return (
    (event.type === 'message.delta' || event.type === 'thinking.delta') &&
    typeof event.text === 'string' &&
    (event.call === undefined || typeof event.call === 'string') &&
    (event.attempt === undefined || (typeof event.attempt === 'number' && Number.isInteger(event.attempt)))
  );
}
