import { sanitizeMarkdown } from '../../core/skills/sanitize';
import { adversarialPatterns, plainProse } from '../support/adversarial-markdown';
import { cpuMsPerCall } from '../support/thread-cpu';

/**
 * What sanitizing 1 MiB costs, in CPU milliseconds of the worker thread that sanitize.test.ts runs this in (with a CPU
 * budget): plain prose as the best of a few calls, the baseline; an adversarial pattern as one call, as it only has to
 * stay within a large multiple of the baseline.
 */
export const costBytes = 1024 * 1024;

export type CostRequest = { input: 'plain prose' } | { input: 'pattern'; name: string };

const plainProseRounds = 3;

/** The worker's entry (see test/support/cpu-budget-worker.ts). */
export function answer(request: CostRequest): number {
  if (request.input === 'pattern') {
    const text = adversarialPatterns[request.name](costBytes);
    return cpuMsPerCall(() => sanitizeMarkdown(text), 0);
  }
  const text = plainProse(costBytes);
  return Math.min(...Array.from({ length: plainProseRounds }, () => cpuMsPerCall(() => sanitizeMarkdown(text))));
}
