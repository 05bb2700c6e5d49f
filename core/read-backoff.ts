/** How long a feed waits before it tries the log again after failed reads (api/streams/turn-feed.ts). */
export interface ReadBackoff {
  /** The pause after the first failure; it doubles with each further failure in a row. */
  retryMs: number;
  /** The longest pause, however many reads failed in a row: a worker that recovers is read again within it. */
  maxRetryMs: number;
}

/**
 * The pause after `failures` reads in a row failed (1 for the first), in milliseconds: `retryMs` doubled for each
 * failure after the first, at most `maxRetryMs`, and jittered down by up to half (`random` in [0, 1): 0 the shortest,
 * just under 1 the full pause) so that feeds failing together do not retry together. Never more than `maxRetryMs`;
 * the count starts again at a read that succeeds.
 */
export function readRetryMs(failures: number, backoff: ReadBackoff, random: number): number {
  const { retryMs, maxRetryMs } = backoff;
  const cap = Math.max(0, maxRetryMs);
  // 2 ** 1100 is Infinity and min() takes the cap; clamping the exponent keeps the arithmetic finite anyway.
  const doublings = Math.min(Math.max(0, Math.floor(failures) - 1), 52);
  const full = Math.min(Math.max(0, retryMs) * 2 ** doublings, cap);
  const jitter = Math.min(Math.max(random, 0), 1);
  return Math.round(full / 2 + (full / 2) * jitter);
}
