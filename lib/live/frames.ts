import type { TurnSnapshot } from '../../core/turn-snapshot';
import { isLiveEvent, isTurnSnapshot, type LiveEvent } from './channel';

/**
 * The local socket's wire format: one JSON object per line, `{"turn": id, "event": LiveEvent}`, or
 * `{"turn": id, "state": TurnSnapshot}` for the turn's latest state.
 */
export const maxFrameBytes = 256 * 1024;

export type Frame =
  { turnId: string; event: LiveEvent } | { turnId: string; state: TurnSnapshot } | { turnId: string; forget: true };

/** An event as a frame, or null when it is too large for one (a stream that misses it reads it from the log). */
export function encodeFrame(turnId: string, event: LiveEvent): string | null {
  const frame = `${JSON.stringify({ turn: turnId, event })}\n`;
  return frame.length < maxFrameBytes ? frame : null;
}

/**
 * The turn's state as a frame; a state too large for one frame (a huge output or artifact) is sent as `forget`
 * instead, so the broker drops the older state it holds rather than keep showing it.
 */
export function encodeStateFrame(turnId: string, state: TurnSnapshot): string {
  const frame = `${JSON.stringify({ turn: turnId, state })}\n`;
  return frame.length < maxFrameBytes ? frame : `${JSON.stringify({ turn: turnId, forget: true })}\n`;
}

export function decodeFrame(line: string): Frame | null {
  try {
    const value = JSON.parse(line) as { turn?: unknown; event?: unknown; state?: unknown; forget?: unknown };
    if (typeof value.turn !== 'string') return null;
    if (isLiveEvent(value.event)) return { turnId: value.turn, event: value.event };
    if (isTurnSnapshot(value.state)) return { turnId: value.turn, state: value.state };
    if (value.forget === true) return { turnId: value.turn, forget: true };
    return null;
  } catch {
    return null;
  }
}

/** Splits a byte stream into lines; a line longer than `maxFrameBytes` makes `push` return false. */
export class LineSplitter {
  private pending = '';

  constructor(private readonly onLine: (line: string) => void) {}

  push(chunk: string): boolean {
    const parts = (this.pending + chunk).split('\n');
    this.pending = parts.pop() ?? '';
    for (const line of parts) if (line) this.onLine(line);
    return this.pending.length <= maxFrameBytes;
  }
}
