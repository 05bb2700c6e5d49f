import { HttpError } from '../errors';
import type { SharedStreamCounts } from './shared-stream-counts';

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
 * Every open SSE and WebSocket stream of this process: capped per user (API keys and stream tokens alike; across the
 * API processes too when they share Redis) and in total, so one client cannot hold hundreds of idle streams (each a
 * socket and, per turn, a feed), and closed cleanly at shutdown.
 */
export class OpenStreams {
  private readonly closers = new Set<() => void>();
  private readonly perUser = new Map<string, number>();
  private leased = 0;

  constructor(
    private readonly caps: { perUser: number; total: number } = { perUser: Infinity, total: Infinity },
    private readonly shared?: SharedStreamCounts,
  ) {}

  /** A lease on a stream for `user`, or a 429 `too_many_streams` (with `retryAfterSeconds`) beyond a cap. */
  async lease(user: string): Promise<StreamLease> {
    const local = this.leaseHere(user);
    if (!this.shared) return local;
    const place = await this.shared.take(user, this.caps.perUser);
    if (!place.taken) {
      local.release();
      throw tooMany(
        `At most ${this.caps.perUser} streams may be open per user, across the API processes; close one first.`,
      );
    }
    return {
      attach: local.attach,
      release: () => {
        local.release();
        place.giveBack();
      },
    };
  }

  private leaseHere(user: string): StreamLease {
    const held = this.perUser.get(user) ?? 0;
    if (held >= this.caps.perUser) {
      throw tooMany(`At most ${this.caps.perUser} streams may be open per user; close one first.`);
    }
    if (this.leased >= this.caps.total)
      throw tooMany(`This API process has its maximum of ${this.caps.total} open streams; try again shortly.`);
    this.perUser.set(user, held + 1);
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
        const left = (this.perUser.get(user) ?? 1) - 1;
        if (left > 0) this.perUser.set(user, left);
        else this.perUser.delete(user);
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
