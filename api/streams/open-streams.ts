import { HttpError } from '../errors';

/** Above this many unsent bytes a stream's client is not reading: the stream ends rather than buffer without bound. */
export const maxBufferedStreamBytes = 8 * 1024 * 1024;

/** How long a client refused for too many streams is asked to wait: streams end with their turns. */
const retryAfterSeconds = 10;

/** A stream's place within the caps, taken before the stream starts; give it back with `release`. */
export interface StreamLease {
  /** The stream is open: shutdown closes it with `close`. */
  attach(close: () => void): void;
  release(): void;
}

/**
 * Every open SSE and WebSocket stream of this process: capped per user (API keys and stream tokens alike) and in total, so
 * one client cannot hold hundreds of idle streams (each a socket and, per turn, a feed), and closed cleanly at shutdown.
 */
export class OpenStreams {
  private readonly closers = new Set<() => void>();
  private readonly perKey = new Map<string, number>();
  private leased = 0;

  constructor(private readonly caps: { perKey: number; total: number } = { perKey: Infinity, total: Infinity }) {}

  /** A lease on a stream for `key`, or a 429 `too_many_streams` (with `retryAfterSeconds`) beyond a cap. */
  lease(key: string): StreamLease {
    const held = this.perKey.get(key) ?? 0;
    if (held >= this.caps.perKey) {
      throw tooMany(`At most ${this.caps.perKey} streams may be open per user; close one first.`);
    }
    if (this.leased >= this.caps.total) throw tooMany(`This API process has its maximum of ${this.caps.total} open streams; try again shortly.`);
    this.perKey.set(key, held + 1);
    this.leased += 1;
    let released = false;
    let closer: (() => void) | undefined;
    return {
      attach: (close) => {
        if (released) return;
        closer = close;
        this.closers.add(close);
      },
      release: () => {
        if (released) return;
        released = true;
        if (closer) this.closers.delete(closer);
        this.leased -= 1;
        const left = (this.perKey.get(key) ?? 1) - 1;
        if (left > 0) this.perKey.set(key, left);
        else this.perKey.delete(key);
      },
    };
  }

  get size(): number {
    return this.leased;
  }

  closeAll(): void {
    for (const close of [...this.closers]) {
      this.closers.delete(close);
      try {
        close();
      } catch {
        // Already gone.
      }
    }
  }
}

function tooMany(message: string): HttpError {
  return new HttpError(429, 'too_many_streams', message, retryAfterSeconds);
}
