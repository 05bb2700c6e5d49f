import type { LoggedEvent, PendingCheckpoint, StreamEvent } from '../../../lib/client';

/**
 * A turn as the page holds it: its durable events in offset order (exactly the turn's log, each once), and the text
 * the model is streaming now (live deltas, never logged). Pure: the conversation and the tests read the same state.
 */
export interface TurnState {
  events: LoggedEvent[];
  live: LiveText | null;
}

/** The deltas of the model call streaming now; a retried call (a higher attempt, or `message.reset`) starts again. */
export interface LiveText {
  call: string;
  attempt: number;
  text: string;
  depth?: number;
}

export const emptyTurn: TurnState = { events: [], live: null };

export const lastOffset = (state: TurnState): number => state.events.at(-1)?.offset ?? 0;

/** The state after one event of the stream or the log; an event already held (same offset) changes nothing. */
export function withEvent(state: TurnState, event: StreamEvent): TurnState {
  switch (event.type) {
    case 'message.delta':
      return { ...state, live: withDelta(state.live, event.text, event.call ?? '', event.attempt ?? 1, event.depth) };
    case 'thinking.delta':
      return state;
    case 'message.reset':
      return state.live?.call === event.call ? { ...state, live: null } : state;
    default: {
      if (typeof event.offset !== 'number' || event.offset <= lastOffset(state)) return state;
      const logged = event as LoggedEvent;
      return { events: [...state.events, logged], live: logged.type === 'message' ? null : state.live };
    }
  }
}

function withDelta(live: LiveText | null, text: string, call: string, attempt: number, depth?: number): LiveText {
  if (live && live.call === call && live.attempt === attempt) return { ...live, text: live.text + text };
  return { call, attempt, text, ...(depth === undefined ? {} : { depth }) };
}

export const isEnded = (state: TurnState): boolean =>
  state.events.some((event) => event.type === 'done' || event.type === 'error' || event.type === 'cancelled');

export interface ToolCall {
  callId: string;
  name: string;
  args: unknown;
  depth?: number;
  isSkill?: boolean;
  end?: { result: unknown; isError: boolean };
}

export type CheckpointOutcome =
  { kind: 'pending' } | { kind: 'resolved'; action: string; by: string; at: string } | { kind: 'expired'; at: string };

type Terminal = Extract<LoggedEvent, { type: 'done' | 'error' | 'cancelled' }>;

/** What the conversation shows, in order: the model's text, folded tool calls, checkpoints, reports, the ending. */
export type Item =
  | { kind: 'message'; key: string; text: string; streaming: boolean; depth?: number }
  | { kind: 'tools'; key: string; calls: ToolCall[] }
  | {
      kind: 'checkpoint';
      key: string;
      checkpoint: PendingCheckpoint;
      outcome: CheckpointOutcome;
      /** What the turn received: the decision's result ({answer}, {choice}, {approved, overrides, note}, ...). */
      result?: unknown;
    }
  | { kind: 'artifact'; key: string; name: string; data: unknown }
  | { kind: 'end'; key: string; event: Terminal };

const checkpointTool = 'request_human_approval';

/** The items of a turn's events; the live text, if any, comes last. */
export function itemsOf(state: TurnState): Item[] {
  const items: Item[] = [];
  const calls = new Map<string, ToolCall>();
  const checkpoints = new Map<string, Extract<Item, { kind: 'checkpoint' }>>();
  const byCall = new Map<string, Extract<Item, { kind: 'checkpoint' }>>();
  let openCheckpointCall: string | undefined;
  let group: Extract<Item, { kind: 'tools' }> | undefined;
  const endGroup = () => (group = undefined);
  for (const event of state.events) {
    switch (event.type) {
      case 'message':
        endGroup();
        if (event.text.trim() !== '')
          items.push({
            kind: 'message',
            key: `m${event.offset}`,
            text: event.text,
            streaming: false,
            depth: event.depth,
          });
        break;
      case 'tool.start': {
        if (event.name === checkpointTool) {
          openCheckpointCall = event.callId;
          break;
        }
        const call: ToolCall = { callId: event.callId, name: event.name, args: event.args, depth: event.depth };
        if (event.isSkill) call.isSkill = true;
        calls.set(event.callId, call);
        if (!group) {
          group = { kind: 'tools', key: `t${event.offset}`, calls: [] };
          items.push(group);
        }
        group.calls.push(call);
        break;
      }
      case 'tool.end': {
        const checkpoint = byCall.get(event.callId);
        if (checkpoint) checkpoint.result = event.result;
        const call = calls.get(event.callId);
        if (call) call.end = { result: event.result, isError: event.isError };
        break;
      }
      case 'checkpoint.requested': {
        endGroup();
        const item = {
          kind: 'checkpoint' as const,
          key: `c${event.offset}`,
          checkpoint: event.checkpoint,
          outcome: { kind: 'pending' as const },
        };
        items.push(item);
        checkpoints.set(event.checkpoint.id, item);
        if (openCheckpointCall) byCall.set(openCheckpointCall, item);
        openCheckpointCall = undefined;
        break;
      }
      case 'checkpoint.resolved': {
        const item = checkpoints.get(event.checkpointId);
        if (item) item.outcome = { kind: 'resolved', action: event.action, by: event.by, at: event.at };
        break;
      }
      case 'checkpoint.expired': {
        const item = checkpoints.get(event.checkpointId);
        if (item) item.outcome = { kind: 'expired', at: event.at };
        break;
      }
      case 'artifact':
        endGroup();
        items.push({ kind: 'artifact', key: `a${event.offset}`, name: event.name, data: event.data });
        break;
      case 'done':
      case 'error':
      case 'cancelled':
        endGroup();
        items.push({ kind: 'end', key: `e${event.offset}`, event });
        break;
      default:
        break;
    }
  }
  if (state.live && state.live.text !== '')
    items.push({ kind: 'message', key: 'live', text: state.live.text, streaming: true, depth: state.live.depth });
  return items;
}

/** The checkpoint the turn waits at now, if any: requested, and neither resolved nor expired, and the turn not ended. */
export function pendingCheckpoint(state: TurnState): PendingCheckpoint | undefined {
  if (isEnded(state)) return undefined;
  const items = itemsOf({ events: state.events, live: null });
  for (let i = items.length - 1; i >= 0; i -= 1) {
    const item = items[i];
    if (item.kind === 'checkpoint') return item.outcome.kind === 'pending' ? item.checkpoint : undefined;
  }
  return undefined;
}
