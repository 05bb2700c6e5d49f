import { cpuOfPid, rssOfPid } from './stats';

/** The resident set size of another process, sampled every `everyMs` for its peak, and its CPU time since the start. */
export class ProcessSampler {
  private readonly timer: NodeJS.Timeout;
  private readonly cpuBefore: number;
  readonly before: number;
  peak: number;

  constructor(private readonly pid: number, everyMs = 200) {
    this.cpuBefore = cpuOfPid(pid);
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

  stop(): { after: number; peak: number; cpuSeconds: number } {
    clearInterval(this.timer);
    return { after: this.now(), peak: this.peak, cpuSeconds: this.cpuSeconds() };
  }
}
