import fs from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/** Nearest-rank percentile of the finite values; NaN when there are none. */
export function percentile(values: number[], p: number): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** Resident set size of another process, from /proc; NaN where that is not readable. */
export function rssOfPid(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

const clockTicksPerSecond = 100; // USER_HZ: 100 on Linux for all common architectures

/** CPU seconds (user + system) another process has used so far, from /proc; NaN where not readable. */
export function cpuOfPid(pid: number | undefined, statFile = `/proc/${pid}/stat`): number {
  if (pid === undefined) return Number.NaN;
  try {
    const stat = fs.readFileSync(statFile, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clockTicksPerSecond;
  } catch {
    return Number.NaN;
  }
}

/** The CPU seconds of each thread of a process, by thread id (the main thread's id is the pid); empty when unreadable. */
export function threadCpuOfPid(pid: number): Map<number, number> {
  const threads = new Map<number, number>();
  let ids: string[];
  try {
    ids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return threads;
  }
  for (const id of ids) {
    const seconds = cpuOfPid(Number(id), `/proc/${pid}/task/${id}/stat`);
    if (Number.isFinite(seconds)) threads.set(Number(id), seconds);
  }
  return threads;
}

export interface MemorySample {
  /** This process: the worker, the API, the fake model and the client. */
  rss: number;
  /** The Temporal dev server. */
  temporalRss: number;
}

/** Samples memory every 200 ms and the event loop delay of this process while a scenario runs. */
export class Sampler {
  private readonly timer: NodeJS.Timeout;
  private readonly loop = monitorEventLoopDelay({ resolution: 10 });
  readonly before: MemorySample;
  peak: MemorySample;
  private readonly cpuBefore = process.cpuUsage();
  private readonly temporalCpuBefore: number;

  constructor(private readonly temporalPid: number | undefined) {
    this.temporalCpuBefore = cpuOfPid(temporalPid);
    this.before = this.sample();
    this.peak = { ...this.before };
    this.loop.enable();
    this.timer = setInterval(() => this.track(), 200);
  }

  private sample(): MemorySample {
    return { rss: process.memoryUsage.rss(), temporalRss: rssOfPid(this.temporalPid) };
  }

  private track(): MemorySample {
    const now = this.sample();
    this.peak = {
      rss: Math.max(this.peak.rss, now.rss),
      temporalRss: Math.max(this.peak.temporalRss, now.temporalRss),
    };
    return now;
  }

  stop(): {
    after: MemorySample;
    loopDelayP99Ms: number;
    loopDelayMaxMs: number;
    cpuSeconds: { bench: number; temporal: number };
  } {
    clearInterval(this.timer);
    this.loop.disable();
    const cpu = process.cpuUsage(this.cpuBefore);
    return {
      after: this.track(),
      loopDelayP99Ms: this.loop.percentile(99) / 1e6,
      loopDelayMaxMs: this.loop.max / 1e6,
      cpuSeconds: {
        bench: (cpu.user + cpu.system) / 1e6,
        temporal: cpuOfPid(this.temporalPid) - this.temporalCpuBefore,
      },
    };
  }
}

export const mb = (bytes: number): string => (Number.isFinite(bytes) ? `${Math.round(bytes / 1024 / 1024)}` : '?');
export const ms = (value: number): string => (Number.isFinite(value) ? `${Math.round(value)}` : '?');
