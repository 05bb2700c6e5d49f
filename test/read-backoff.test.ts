import { readRetryMs, type ReadBackoff } from '../core/read-backoff';

const backoff: ReadBackoff = { retryMs: 1_000, maxRetryMs: 30_000 };

/** Failed reads in a row, the jitter drawn, the pause; or other settings. */
const cases: Array<[string, number, number, number, ReadBackoff?]> = [
  ['the first failure waits retryMs at most', 1, 0.999_999, 1_000],
  ['jitter shortens a pause by half at most', 1, 0, 500],
  ['jitter in between', 1, 0.5, 750],
  ['the second failure doubles it', 2, 0.999_999, 2_000],
  ['and the third again', 3, 0.999_999, 4_000],
  ['the fifth is 16 s', 5, 0.999_999, 16_000],
  ['the sixth reaches the cap', 6, 0.999_999, 30_000],
  ['the cap holds however many failed', 1_000, 0.999_999, 30_000],
  ['jitter applies under the cap too', 1_000, 0, 15_000],
  ['a count of 0 (no failure yet) is the first pause', 0, 0.999_999, 1_000],
  ['a cap below retryMs wins', 1, 0.999_999, 400, { retryMs: 1_000, maxRetryMs: 400 }],
  ['a random outside [0, 1) is clamped', 2, 7, 2_000],
  ['a negative random is clamped', 2, -1, 1_000],
  ['retryMs 0 retries at once', 4, 0.5, 0, { retryMs: 0, maxRetryMs: 30_000 }],
];

describe('readRetryMs: the pause after failed reads of a turn log', () => {
  it.each(cases)('%s', (_name, failures, random, ms, settings = backoff) => {
    expect(readRetryMs(failures, settings, random)).toBe(ms);
  });

  it('never exceeds the cap and never shrinks as failures add up (same jitter)', () => {
    for (const random of [0, 0.3, 0.999]) {
      let last = 0;
      for (let failures = 1; failures <= 200; failures += 1) {
        const ms = readRetryMs(failures, backoff, random);
        expect(ms).toBeLessThanOrEqual(backoff.maxRetryMs);
        expect(ms).toBeGreaterThanOrEqual(last);
        last = ms;
      }
    }
  });
});
