import { isLiveEvent, type LiveEvent } from './channel';

/** The local socket's wire format: one JSON object per line, `{"turn": id, "event": LiveEvent}`. */
export const maxFrameBytes = 256 * 1024;

export function encodeFrame(turnId: string, event: LiveEvent): string {
  return `${JSON.stringify({ turn: turnId, event })}\n`;
}

export function decodeFrame(line: string): { turnId: string; event: LiveEvent } | null {
  try {
    const value = JSON.parse(line) as { turn?: unknown; event?: unknown };
    if (typeof value.turn !== 'string' || !isLiveEvent(value.event)) return null;
    return { turnId: value.turn, event: value.event };
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
