import type { TurnStatus } from './turn';

/**
 * The turn's event catalogue (docs/events.md). Every event gets an offset in the turn's log; `message.delta` and
 * `thinking.delta` are live only, everything else is kept in the durable log.
 */
export type TurnEventBody =
  | { type: 'message.delta'; text: string }
  | { type: 'thinking.delta'; text: string }
  | { type: 'message'; text: string }
  | { type: 'tool.start'; name: string; args: unknown; callId: string; isSkill?: boolean; depth?: number; input?: unknown }
  | { type: 'tool.end'; name: string; result: unknown; callId: string; isError: boolean; isSkill?: boolean; depth?: number }
  | { type: 'checkpoint.requested'; checkpoint: unknown }
  | { type: 'checkpoint.resolved'; checkpointId: string; action: string; by: string }
  | { type: 'checkpoint.expired'; checkpointId: string }
  | { type: 'step'; skill: string; step: string | null; remaining: string[] }
  | { type: 'artifact'; name: string; mimeType: string; data: unknown }
  | { type: 'status'; status: TurnStatus; reason?: string }
  | { type: 'done'; output: string }
  | { type: 'error'; code: string; message: string }
  | { type: 'cancelled'; reason: string };

export type TurnEvent = TurnEventBody & { offset: number; at: string };

export type TerminalEvent = Extract<TurnEventBody, { type: 'done' | 'error' | 'cancelled' }>;

export const liveOnlyEventTypes: ReadonlySet<TurnEventBody['type']> = new Set(['message.delta', 'thinking.delta']);

export function isTerminalEvent(event: { type: string }): boolean {
  return event.type === 'done' || event.type === 'error' || event.type === 'cancelled';
}

