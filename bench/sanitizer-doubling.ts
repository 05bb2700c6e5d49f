import { sanitizeMarkdown } from '../core/skills/sanitize';
import { adversarialPatterns, plainProse } from '../test/support/adversarial-markdown';
import { cpuMsPerCall, processCpuMs } from '../test/support/thread-cpu';

/**
 * How the sanitizer's time grows when its input doubles, pattern by pattern (run in a worker thread with a CPU budget
 * by bench/sanitizer.ts). Each pattern is measured at 256 and 512 KiB against plain prose of the same sizes, in the same
 * run: the growth is the pattern's ratio per doubling, scaled by what doubling costs plain prose here (about 2; what
 * allocation and GC add). A linear pass stays near 2, a quadratic one is 4 and more at every doubling; at these sizes
 * a quadratic one takes minutes, so its worker overruns the budget long before it answers. A linear pattern that takes
 * a few milliseconds can still show one step of x3 or x4 where its working set outgrows a cache or a GC space, once:
 * when the doubling from 256 KiB is not linear, the next one (512 KiB to 1 MiB) is measured, and one linear doubling of
 * the two is linear.
 */
export const doublingFrom = 256 * 1024;
/** A linear pattern measured at a bad moment of a loaded machine comes out at up to about 2.6; a quadratic one at 4. */
export const linearGrowth = 2.5;

/** One doubling: CPU milliseconds per call of the pattern and of plain prose, at `bytes` and twice that. */
export interface Doubling {
  bytes: number;
  ms: [number, number];
  plainMs: [number, number];
  /** The pattern's ratio per doubling, relative to plain prose's (2 when plain prose grows 2 times or less). */
  growth: number;
  rounds: number;
}

/** The doubling from 256 KiB, and the one from 512 KiB when the first is not linear. */
export type Growth = { name: string; doublings: Doubling[] };

interface Rounds {
  minRounds: number;
  maxRounds: number;
  /** Whether to stop after this round (CPU time spent), once `minRounds` have run. */
  enough: () => boolean;
}

/**
 * Rounds over the four inputs in turns (so that a slow moment of the machine hits each alike), keeping each one's
 * best, until the growth is linear or `rounds` says to stop.
 */
export function measureDoubling(name: string, bytes: number, { minRounds, maxRounds, enough }: Rounds): Doubling {
  const make = adversarialPatterns[name];
  const texts = [make(bytes), make(2 * bytes), plainProse(bytes), plainProse(2 * bytes)];
  const best = texts.map(() => Infinity);
  let growth = Infinity;
  let rounds = 0;
  while (rounds < minRounds || (growth > linearGrowth && rounds < maxRounds && !enough())) {
    texts.forEach(
      (text, i) =>
        (best[i] = Math.min(
          best[i],
          cpuMsPerCall(() => sanitizeMarkdown(text)),
        )),
    );
    rounds += 1;
    const [whole, double, plainWhole, plainDouble] = best;
    growth = (double / whole) * (2 / Math.max(2, plainDouble / plainWhole));
  }
  const [whole, double, plainWhole, plainDouble] = best.map(hundredths);
  return { bytes, ms: [whole, double], plainMs: [plainWhole, plainDouble], growth: hundredths(growth), rounds };
}

const hundredths = (value: number) => Math.round(value * 100) / 100;

export function isLinear(growth: Growth): boolean {
  return growth.doublings.some((doubling) => doubling.growth <= linearGrowth);
}

/**
 * CPU time (the process's, as the budget counts it) after which a pattern stops measuring more rounds, for the first
 * doubling and for both: the slowest pattern's rounds take about 1.6 s at 256 KiB and 3 s at 512 KiB.
 */
export const roundsCpuMs = { first: 6_000, both: 12_000 };

/** The worker's entry (see test/support/cpu-budget-worker.ts). */
export function answer({ name }: { name: string }): Growth {
  const started = processCpuMs();
  const spentOver = (ms: number) => () => processCpuMs() - started > ms;
  const growth: Growth = {
    name,
    doublings: [
      measureDoubling(name, doublingFrom, { minRounds: 2, maxRounds: 8, enough: spentOver(roundsCpuMs.first) }),
    ],
  };
  if (!isLinear(growth))
    growth.doublings.push(
      measureDoubling(name, 2 * doublingFrom, { minRounds: 1, maxRounds: 6, enough: spentOver(roundsCpuMs.both) }),
    );
  return growth;
}
