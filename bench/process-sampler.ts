import { cpuOfPid, rssOfPid, threadCpuOfPid } from './stats';

/**
 * The resident set size of another process, sampled every `everyMs` for its peak, and its CPU time since the start: in
 * all, and of its main thread and of its busiest other thread (in a worker, the workflow thread, where activations run).
 */
export class ProcessSampler {
  private readonly timer: NodeJS.Timeout;
  private readonly cpuBefore: number;
  private readonly threadsBefore: Map<number, number>;
  readonly before: number;
  peak: number;

  constructor(
    private readonly pid: number,
    everyMs = 200,
  ) {
    this.cpuBefore = cpuOfPid(pid);
    this.threadsBefore = threadCpuOfPid(pid);
    this.before = rssOfPid(pid);
    this.peak = this.before;
    this.timer = setInterval(() => this.now(), everyMs);
  }

  /** Its RSS now (bytes), counted in the peak. */
  now(): number {
    const rss = rssOfPid(this.pid);
    if (Number.isFinite(rss)) this.peak = Math.max(this.peak, rss);
    return rss;
  }

  cpuSeconds(): number {
    return cpuOfPid(this.pid) - this.cpuBefore;
  }

  /** CPU seconds since the start of the main thread and of the busiest other thread (NaN when unreadable). */
  threadSeconds(): { main: number; busiestOther: number } {
    let main = Number.NaN;
    let busiestOther = Number.NaN;
    for (const [id, seconds] of threadCpuOfPid(this.pid)) {
      const used = seconds - (this.threadsBefore.get(id) ?? 0);
      if (id === this.pid) main = used;
      else if (!(used <= busiestOther)) busiestOther = used;
    }
    return { main, busiestOther };
  }

  stop(): { after: number; peak: number; cpuSeconds: number; threads: { main: number; busiestOther: number } } {
    clearInterval(this.timer);
    return { after: this.now(), peak: this.peak, cpuSeconds: this.cpuSeconds(), threads: this.threadSeconds() };
  }
}
