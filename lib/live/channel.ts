import type { TurnEvent } from '../../core/events';
import type { TurnSnapshot } from '../../core/turn-snapshot';

/**
 * Live events: what a turn shows while the model generates (`message.delta`, `thinking.delta`), each durable event of
 * its log as it is written (`log.event`), and, from workers of older code, the hint that the log grew
 * (`log.appended`). They are never the source of truth: a listener that is not connected when one is published never
 * sees it, and the durable log (the `turnEvents` query) is what a stream reads to fill what it missed.
 */
export type LiveEvent = DeltaEvent | LoggedEvent | LogAppendedEvent;

/** A durable event of the turn's log, pushed by the worker as the workflow writes it. */
export interface LoggedEvent {
  type: 'log.event';
  event: TurnEvent;
}

/** Older workers' hint: the turn's durable log grew to `offset` (read it). */
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
  /**
   * Settles once events published from now on reach this process's listeners of the turn (at once for local channels;
   * Redis confirms its SUBSCRIBE first, and may never while it is down: callers bound the wait).
   */
  subscribed(turnId: string): Promise<void>;
  /**
   * Keeps the turn's latest state (a snapshot with the log offset and the run it was taken at; a snapshot of the same
   * run at an older offset than the one kept is ignored: core/turn-snapshot.ts `supersedes`), for readers that do not
   * follow the turn. Never blocks or throws.
   */
  publishState(turnId: string, snapshot: TurnSnapshot): void;
  /** The latest state kept for the turn, or undefined (none, expired, or the store behind it unreachable). */
  latestState(turnId: string): Promise<TurnSnapshot | undefined>;
  /**
   * Calls `listener` with the turns this process follows each time their subscriptions hold again after the channel's
   * connection dropped (Redis: confirmed by its SUBSCRIBE after a reconnect, or on the first connection for turns whose
   * queued SUBSCRIBE had failed): what was published meanwhile never came.
   * Channels that cannot lose a subscription (in process, the local socket's broker) have none. Returns the function
   * that stops the calls.
   */
  onResubscribed?(listener: (turnIds: string[]) => void): () => void;
  close(): Promise<void>;
}

export function isLiveEvent(value: unknown): value is LiveEvent {
  if (!value || typeof value !== 'object') return false;
  const event = value as Record<string, unknown>;
  if (event.type === 'log.appended') return isOffset(event.offset);
  if (event.type === 'log.event') return isLoggedTurnEvent(event.event);
  return (
    (event.type === 'message.delta' || event.type === 'thinking.delta') &&
    typeof event.text === 'string' &&
    (event.call === undefined || typeof event.call === 'string') &&
    (event.attempt === undefined || (typeof event.attempt === 'number' && Number.isInteger(event.attempt)))
  );
}

export function isTurnSnapshot(value: unknown): value is TurnSnapshot {
  if (!value || typeof value !== 'object') return false;
  const snapshot = value as Record<string, unknown>;
  const state = snapshot.state as Record<string, unknown> | undefined;
  return (
    isOffset(snapshot.offset) &&
    (snapshot.runId === undefined || typeof snapshot.runId === 'string') &&
    !!state &&
    typeof state === 'object' &&
    typeof state.status === 'string' &&
    typeof state.turnId === 'string'
  );
}

function isLoggedTurnEvent(value: unknown): value is TurnEvent {
  if (!value || typeof value !== 'object') return false;
  const event = value as Record<string, unknown>;
  return typeof event.type === 'string' && isOffset(event.offset) && (event.offset as number) >= 1;
}

function isOffset(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}
