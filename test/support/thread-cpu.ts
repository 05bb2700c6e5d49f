import { existsSync, readFileSync } from 'node:fs';
import v8 from 'node:v8';
import vm from 'node:vm';

v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc') as () => void;

/** CPU milliseconds of this process (all its threads). */
export const processCpuMs = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/**
 * CPU milliseconds used by this thread (Linux: its scheduler statistics), so that the collector's background threads,
 * still sweeping one input's garbage, do not count against the next input; elsewhere the process's CPU time. The
 * statistics advance a scheduler tick (a few milliseconds) at a time.
 */
const threadStats = '/proc/thread-self/schedstat';
export const threadCpuMs: () => number = existsSync(threadStats)
  ? () => Number(readFileSync(threadStats, 'utf8').split(' ')[0]) / 1e6
  : processCpuMs;

/**
 * CPU milliseconds per call of `work`, from a collected heap (garbage left by earlier work does not count), calling it
 * again until `windowMs` of CPU time have passed so that the clock's ticks do not dominate.
 */
export function cpuMsPerCall(work: () => unknown, windowMs = 40): number {
  collectGarbage();
  let calls = 0;
  let used = 0;
  const started = threadCpuMs();
  do {
    work();
    calls += 1;
    used = threadCpuMs() - started;
  } while (used < windowMs);
  return used / calls;
}
