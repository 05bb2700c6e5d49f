import path from 'node:path';
import { Worker } from 'node:worker_threads';

/**
 * The in-memory rate-limit store and the limiter's list of refused keys, timed in a worker thread (a store that scans
 * its whole table for every new key past 50,000 windows or 10,000 refused keys blocks the event loop for seconds over
 * the next 10,000 addresses). Each batch of new keys past those sizes is timed against batches below them in the
 * same run; the worker is ended at a deadline of its own, so a store that scans fails here and does not hang.
 */
const deadlineMs = 20_000;

/** Runs in the worker: the best of three batches below the size and three above, per structure, in milliseconds. */
const script = `
const { parentPort, workerData } = require('node:worker_threads');
require(workerData.tsx).register();
const { MemoryWindowStore, RateLimiter } = require(workerData.module);
async function best(run, from, batch) {
  let fastest = Infinity;
  for (let i = 0; i < 3; i += 1) {
    const start = performance.now();
    await run(from + i * batch, from + (i + 1) * batch);
    fastest = Math.min(fastest, performance.now() - start);
  }
  return fastest;
}
(async () => {
  const store = new MemoryWindowStore();
  const hit = async (from, to) => { for (let i = from; i < to; i += 1) await store.hit('auth:' + i, 60000); };
  await hit(0, 20000);
  const storeBelow = await best(hit, 20000, 10000);
  const storeAbove = await best(hit, 50000, 10000);

  const limiter = new RateLimiter(new MemoryWindowStore(), 1, 60000);
  const refuse = async (from, to) => { for (let i = from; i < to; i += 1) { await limiter.take('k' + i); await limiter.take('k' + i); } };
  const refusedBelow = await best(refuse, 0, 3000);
  await refuse(9000, 12000);
  const refusedAbove = await best(refuse, 12000, 3000);
  parentPort.postMessage({ storeBelow, storeAbove, refusedBelow, refusedAbove });
})();
`;

interface Timings {
  storeBelow: number;
  storeAbove: number;
  refusedBelow: number;
  refusedAbove: number;
}

function timeInWorker(): Promise<Timings> {
  const worker = new Worker(script, {
    eval: true,
    workerData: { tsx: require.resolve('tsx/cjs/api'), module: path.resolve(__dirname, '../lib/rate-limits.ts') },
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void worker.terminate();
      reject(new Error(`The timings took over ${deadlineMs / 1000} s: a structure scans its whole table for new keys`));
    }, deadlineMs);
    worker.once('message', (timings: Timings) => {
      clearTimeout(timer);
      void worker.terminate();
      resolve(timings);
    });
    worker.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

describe('the in-memory rate limits', () => {
  it('take new keys past 50,000 windows and 10,000 refused keys as fast as below them (no scan of the table)', async () => {
    const timings = await timeInWorker();
    // New keys past the sizes cost what as many below them do; a scan per key costs hundreds of times more.
    expect(timings.storeAbove / timings.storeBelow).toBeLessThan(5);
    expect(timings.refusedAbove / timings.refusedBelow).toBeLessThan(5);
  });
});
