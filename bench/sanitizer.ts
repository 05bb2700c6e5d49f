import fs from 'node:fs';
import path from 'node:path';
import { adversarialPatterns } from '../test/support/adversarial-markdown';
import { CpuBudgetWorker, type Answer } from '../test/support/cpu-budget-worker';
import type { Machine } from './report';
import { doublingFrom, isLinear, linearGrowth, roundsCpuMs, type Growth } from './sanitizer-doubling';

/**
 * How the sanitizer's time grows when its input doubles, for every adversarial pattern (bench/sanitizer-doubling.ts
 * measures one in a worker thread, which is stopped when it overruns a budget of CPU time: a quadratic pattern takes
 * minutes at these sizes). A pattern fails when it is not linear or overruns.
 */
export interface SanitizerResult {
  rows: Array<{ name: string; answer: Answer<Growth> }>;
  failed: string[];
}

/** What a pattern may spend measuring (`roundsCpuMs`) and a round over, far less than a quadratic pattern takes. */
const budget = { cpuMs: roundsCpuMs.both + 8_000, wallMs: 150_000 };

export async function measureSanitizer(log: (line: string) => void): Promise<SanitizerResult> {
  const worker = new CpuBudgetWorker<{ name: string }, Growth>(path.join(__dirname, 'sanitizer-doubling.ts'));
  const rows: SanitizerResult['rows'] = [];
  try {
    for (const name of Object.keys(adversarialPatterns)) {
      const answer = await worker.ask({ name }, budget);
      log(`  ${name}: ${describeAnswer(answer)}`);
      rows.push({ name, answer });
    }
  } finally {
    worker.stop();
  }
  const failed = rows
    .filter(({ answer }) => answer.kind === 'over budget' || !isLinear(answer.value))
    .map(({ name, answer }) => `sanitizer: ${name} ${describeAnswer(answer)}`);
  return { rows, failed };
}

function describeAnswer(answer: Answer<Growth>): string {
  if (answer.kind === 'over budget')
    return `not done after ${answer.cpuMs} ms of CPU time (${answer.wallMs} ms of wall time)`;
  return answer.value.doublings
    .map(({ bytes, growth, ms }) => `x${growth} from ${bytes / 1024} KiB (${ms.join(' then ')} ms)`)
    .join(', ');
}

/** The figures as a markdown table: CPU ms per call at 256 and 512 KiB, the growth, and the next doubling's. */
export function sanitizerTable({ rows }: SanitizerResult): string {
  const kib = doublingFrom / 1024;
  const lines = rows.map(({ name, answer }) => {
    if (answer.kind === 'over budget') return `| ${name} | over budget (${answer.cpuMs} ms of CPU) | | | |`;
    const [first, next] = answer.value.doublings;
    return `| ${name} | ${first.ms[0]} | ${first.ms[1]} | x${first.growth} | ${next ? `x${next.growth}` : ''} |`;
  });
  const plain = rows.flatMap(({ answer }) => (answer.kind === 'answered' ? [answer.value.doublings[0].plainMs] : []));
  const range = (values: number[]) => `${Math.min(...values)}-${Math.max(...values)}`;
  const plainLine =
    plain.length > 0
      ? `Plain prose took ${range(plain.map(([whole]) => whole))} ms at ${kib} KiB and ${range(plain.map(([, double]) => double))} ms at ${2 * kib} KiB in the same rounds. `
      : '';
  return [
    `${plainLine}Linear means a growth of at most x${linearGrowth} at one of the two doublings.`,
    '',
    `| pattern | ${kib} KiB | ${2 * kib} KiB | growth | ${2 * kib} KiB to ${(4 * kib) / 1024} MiB |`,
    '|---|---|---|---|---|',
    ...lines,
  ].join('\n');
}

export const sanitizerFiguresHeading = '### Figures of the last run';

/** Replaces the sanitizer's figures in docs/benchmarks.md (under its own section, which the other parts leave alone). */
export function writeSanitizerFigures(
  machine: Machine,
  result: SanitizerResult,
  file = path.resolve(__dirname, '..', 'docs', 'benchmarks.md'),
): string {
  const existing = fs.readFileSync(file, 'utf8');
  const start = existing.indexOf(`\n${sanitizerFiguresHeading}\n`);
  if (start === -1) throw new Error(`${file} has no "${sanitizerFiguresHeading}" section for the sanitizer's figures`);
  const next = existing.indexOf('\n## ', start + 1);
  const end = next === -1 ? existing.length : next;
  const about = `${machine.date}, commit ${machine.commit}, ${machine.nproc} CPUs (${machine.cpu}), Node ${machine.node}, load average before ${machine.loadBefore}`;
  const section = `\n${sanitizerFiguresHeading}\n\n${about}. ${sanitizerTable(result)}\n`;
  fs.writeFileSync(file, existing.slice(0, start) + section + existing.slice(end));
  return file;
}
