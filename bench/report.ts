import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ScenarioResult } from './scenario';
import { mb, ms } from './stats';

export interface Machine {
  date: string;
  nproc: number;
  memoryGiB: string;
  node: string;
  cpu: string;
  loadBefore: string;
  commit: string;
}

const loadavg = () =>
  os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

export function describeMachine(): Machine {
  let cpu = os.cpus()[0]?.model ?? 'unknown';
  try {
    cpu = /^model name\s*:\s*(.+)$/m.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? cpu;
  } catch {
    // not Linux: keep what os.cpus() says
  }
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    // not a git checkout
  }
  return {
    date: new Date().toISOString(),
    nproc: os.availableParallelism(),
    memoryGiB: (os.totalmem() / 1024 ** 3).toFixed(1),
    node: process.version,
    cpu,
    loadBefore: loadavg(),
    commit,
  };
}

export interface RunSettings {
  chunkDelayMs: number;
  baselineTurns: number;
  examBaselineTurns: number;
  concurrency: number;
}

const table = (head: string[], align: string[], rows: Array<Array<string | number>>): string =>
  [`| ${head.join(' | ')} |`, `|${align.join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');

export function resultsTable(results: ScenarioResult[]): string {
  return table(
    [
      'scenario',
      'turns',
      'in flight',
      'turns/s',
      'p50 ms',
      'p95 ms',
      'max ms',
      'model calls (made/expected)',
      'errors',
      'bench RSS MB before → after (peak)',
      'Temporal RSS MB before → after',
    ],
    ['---', ...Array<string>(10).fill('--:')],
    results.map((r) => [
      r.name,
      r.turns,
      r.concurrency,
      r.turnsPerSec.toFixed(2),
      ms(r.latency.p50),
      ms(r.latency.p95),
      ms(r.latency.max),
      `${r.modelCalls}/${r.expectedModelCalls}`,
      r.errors,
      `${mb(r.memory.before.rss)} → ${mb(r.memory.after.rss)} (${mb(r.memory.peak.rss)})`,
      `${mb(r.memory.before.temporalRss)} → ${mb(r.memory.after.temporalRss)}`,
    ]),
  );
}

const pair = ({ p50, p95 }: { p50: number; p95: number }) => (Number.isFinite(p50) ? `${ms(p50)} / ${ms(p95)}` : '-');

export function timeTable(results: ScenarioResult[]): string {
  return table(
    [
      'scenario',
      'POST message → 202, p50 / p95 ms',
      'turn ended in Temporal, p50 ms',
      'terminal event lag p50 / p95 ms',
      'checkpoint notice lag p50 / p95 ms',
      'POST answer → 200, p50 / p95 ms',
      'probe: turnEvents query / describe, p50 (p95) ms',
      'CPU s: bench process / Temporal',
      'event loop delay p99 / max ms',
    ],
    ['---', ...Array<string>(8).fill('--:')],
    results.map((r) => [
      r.name,
      pair(r.startRequest),
      ms(r.endedP50),
      pair(r.endLag),
      pair(r.checkpointLag),
      pair(r.answerRequest),
      `${ms(r.probe.query.p50)} (${ms(r.probe.query.p95)}) / ${ms(r.probe.describe.p50)} (${ms(r.probe.describe.p95)}), n=${r.probe.query.n}`,
      `${r.cpuSeconds.bench.toFixed(1)} / ${r.cpuSeconds.temporal.toFixed(1)}`,
      `${ms(r.loopDelayP99Ms)} / ${ms(r.loopDelayMaxMs)}`,
    ]),
  );
}

export function workerTable(results: ScenarioResult[]): string {
  const mean = ({ meanMs, count }: { meanMs: number; count: number }) =>
    `${Number.isFinite(meanMs) ? meanMs.toFixed(1) : '-'} (${count})`;
  return table(
    [
      'scenario',
      'workflow task schedule → start',
      'workflow task execution',
      'activity schedule → start',
      'activity execution',
    ],
    ['---', '--:', '--:', '--:', '--:'],
    results.map((r) => [
      r.name,
      mean(r.worker.wftScheduleToStart),
      mean(r.worker.wftExecution),
      mean(r.worker.activityScheduleToStart),
      mean(r.worker.activityExecution),
    ]),
  );
}

export function rpcTable(results: ScenarioResult[]): string {
  const methods = [...new Set(results.flatMap((r) => Object.keys(r.apiRpcs)))].sort();
  return [
    `| scenario | ${methods.join(' | ')} | total per turn |`,
    `|---|${methods.map(() => '--:').join('|')}|--:|`,
    ...results.map((r) => {
      const total = Object.values(r.apiRpcs).reduce((sum, n) => sum + n, 0);
      return `| ${r.name} | ${methods.map((m) => r.apiRpcs[m] ?? 0).join(' | ')} | ${(total / r.turns).toFixed(1)} |`;
    }),
  ].join('\n');
}

/** The three tables, for the console and the docs alike. */
export function allTables(results: ScenarioResult[]): string {
  return [
    resultsTable(results),
    'Where the time goes (lags: receiving an SSE event minus the workflow time stamped on it):',
    timeTable(results),
    "The worker, from the Temporal SDK's metrics: mean ms (count) during the scenario:",
    workerTable(results),
    'gRPC calls from the API to Temporal during the measured part:',
    rpcTable(results),
  ].join('\n\n');
}

export function markdownSection(
  machine: Machine,
  settings: RunSettings,
  results: ScenarioResult[],
  statuses: Map<number, number>,
  histories: string[],
): string {
  const errors = results.flatMap((r) => r.errorSamples.map((e) => `- ${r.name}: ${e}`));
  const httpStatuses = [...statuses]
    .sort(([a], [b]) => a - b)
    .map(([status, n]) => `${status}×${n}`)
    .join(', ');
  return [
    `### Run of ${machine.date}`,
    '',
    `Machine: ${machine.nproc} CPUs (${machine.cpu}), ${machine.memoryGiB} GiB, Node ${machine.node}, load average ${machine.loadBefore} at ` +
      `start, ${loadavg()} at the end. Commit ${machine.commit}. Fake model: ${settings.chunkDelayMs} ms between stream events. ` +
      `Baselines: ${settings.baselineTurns} plain and ${settings.examBaselineTurns} exam turns; ${settings.concurrency} concurrent turns.`,
    '',
    allTables(results),
    '',
    'One turn of each scenario, from its Temporal history:',
    '',
    ...histories.map((line) => `- ${line}`),
    '',
    `HTTP responses the client got over the whole run (setup and warm-up included): ${httpStatuses}.`,
    ...(errors.length > 0 ? ['', 'Errors (first of each scenario):', '', ...errors] : []),
    '',
  ].join('\n');
}

const currentFigures = '## Current figures';

/** Replaces the current figures at the end of docs/benchmarks.md with this run's (earlier runs stay in git history). */
export function writeCurrentFigures(
  section: string,
  file = path.resolve(__dirname, '..', 'docs', 'benchmarks.md'),
): string {
  const existing = fs.readFileSync(file, 'utf8');
  const at = existing.indexOf(`\n${currentFigures}\n`);
  const method = at === -1 ? existing.trimEnd() : existing.slice(0, at).trimEnd();
  fs.writeFileSync(file, `${method}\n\n${currentFigures}\n\n${section.trimEnd()}\n`);
  return file;
}
