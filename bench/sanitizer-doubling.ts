import { existsSync, readFileSync } from 'node:fs';
import v8 from 'node:v8';
import vm from 'node:vm';
import { sanitizeMarkdown } from '../../core/skills/sanitize';

/**
 * How the sanitizer's time grows when its input doubles, pattern by pattern (run in a worker thread with a CPU budget
 * by sanitize.test.ts). Each pattern is measured at 256 and 512 KiB against plain prose of the same sizes, in the same
 * run: the growth is the pattern's ratio per doubling, scaled by what doubling costs plain prose here (about 2; what
 * allocation and GC add). A linear pass stays near 2, a quadratic one is 4 and more at every doubling; at these sizes
 * a quadratic one takes minutes, so its worker overruns the budget long before it answers. A linear pattern that takes
 * a few milliseconds can still show one step of x3 or x4 where its working set outgrows a cache or a GC space, once:
 * when the doubling from 256 KiB is not linear, the next one (512 KiB to 1 MiB) is measured, and one linear doubling of
 * the two is linear.
 */
const repeat = (unit: string, length: number) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length);

export const adversarialPatterns: Record<string, (length: number) => string> = {
  'link opener then spaces': (n) => `](${' '.repeat(n - 2)}`,
  'definition then spaces': (n) => `[a]:${' '.repeat(n - 4)}`,
  'definitions of spaces': (n) => repeat('[a]:    \n', n),
  'link openers': (n) => repeat('[a](', n),
  'script links': (n) => repeat('](javascript:', n),
  'unclosed comments': (n) => repeat('<!--', n),
  'nested comments': (n) => repeat('<<!-- -->!--', n),
  'unclosed tags': (n) => repeat('<a ', n),
  'attributes never closed': (n) => `<a${repeat(' b="<a"', n - 2)}`,
  'quotes inside tags': (n) => repeat('<a x="<a y=\'', n),
  'closing tags never closed': (n) => repeat('</a', n),
  'lone angle brackets': (n) => repeat('<', n),
  'angle brackets and letters': (n) => repeat('<a', n),
  'unclosed autolinks': (n) => repeat('<http://a', n),
  'unclosed email autolinks': (n) => repeat('<a@b', n),
  'backtick runs of growing length': (n) => {
    let text = '';
    for (let run = 1; text.length < n; run += 1) text += `${'`'.repeat(run)}a`;
    return text.slice(0, n);
  },
  'backtick pairs': (n) => repeat('`a``', n),
  'unclosed scripts': (n) => repeat('<script>', n),
  'an HTML block of unclosed tags': (n) => `<div>\n${repeat('<a ', n - 6)}`,
  'an HTML block of unclosed comments': (n) => `<div>\n${repeat('<!--', n - 6)}`,
  'processing instructions': (n) => repeat('<?', n),
  'entities in a link': (n) => `](${repeat('&#0;', n - 2)}`,
  'escaped angle brackets': (n) => repeat('\\<', n),
  'fences around HTML': (n) => repeat('```\n<b>\n', n),
  'indented HTML': (n) => repeat('    <div>x</div>\n', n),
  'nested block quotes': (n) => repeat('> ', n),
  'code that removing HTML turns into prose': (n) => repeat('<b></b>- a\n\n    <script>x</script>\n\n', n),
  // Blanks that do not end their line: every pass that trims line ends must not try each of them as a start.
  'text, blanks, text': (n) => `a${' '.repeat(n - 2)}b`,
  'text, tabs, text': (n) => `a${'\t'.repeat(n - 2)}b`,
  'a code span of blanks': (n) => `\`${' '.repeat(n - 2)}\``,
  'a list item of blanks': (n) => `- a${' '.repeat(n - 4)}b`,
  'a block quote of blanks': (n) => `> a${' '.repeat(n - 4)}b`,
  // Each `<a\n>` is a tag: what is left is `>`, a line of blanks, and `\<a`.
  'block quotes of HTML': (n) => repeat('> <a\n', n),
  // Newlines that do not end the text: trimming the end of a text ending in code must not try each of them.
  'a fence of blank lines': (n) => `\`\`\`\n${'\n'.repeat(n - 7)}\`\`\``,
  'indented code with blank lines': (n) => `    a${'\n'.repeat(n - 10)}    b`,
};

const plainProse = (n: number) =>
  repeat('Plain prose, as most skills are: words, **emphasis**, a [link](https://example.com).\n', n);

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

v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc') as () => void;

const processCpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/**
 * CPU milliseconds used by this thread (Linux: its scheduler statistics), so that the collector's background threads,
 * still sweeping one input's garbage, do not count against the next input; elsewhere the process's CPU time. The
 * statistics advance a scheduler tick (a few milliseconds) at a time, so each measurement runs for `windowMs`.
 */
const threadStats = '/proc/thread-self/schedstat';
const threadCpuMs = existsSync(threadStats)
  ? () => Number(readFileSync(threadStats, 'utf8').split(' ')[0]) / 1e6
  : processCpuMs;
const windowMs = 40;

/** CPU milliseconds of one call, from a collected heap, so that garbage left by the inputs before does not count. */
function cpuMsPerCall(text: string): number {
  collectGarbage();
  let calls = 0;
  let used = 0;
  const started = threadCpuMs();
  do {
    sanitizeMarkdown(text);
    calls += 1;
    used = threadCpuMs() - started;
  } while (used < windowMs);
  return used / calls;
}

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
    texts.forEach((text, i) => (best[i] = Math.min(best[i], cpuMsPerCall(text))));
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
