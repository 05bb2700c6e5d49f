import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultWorkerHeapMb, loadConfig } from '../lib/config';
import { heapFixFor, heapVerdict, heapWarnShare } from '../worker/heap';
import { expectedHeapLimitMb, workerMallocArenas, workerSemiSpaceMb, workerV8Flags } from '../worker/tuning';

const script = path.resolve(__dirname, '..', 'scripts', 'worker.sh');
const mb = 1024 * 1024;

/** Runs scripts/worker.sh with a `node` on PATH that prints its arguments and MALLOC_ARENA_MAX instead of starting. */
function launch(env: Record<string, string>, scriptArgs: string[] = []): { args: string[]; arenas: string } {
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'worker-launch-'));
  try {
    fs.writeFileSync(path.join(bin, 'node'), '#!/bin/sh\nprintf "%s\\n" "$MALLOC_ARENA_MAX" "$@"\n', { mode: 0o755 });
    const out = execFileSync('sh', [script, ...scriptArgs], {
      env: { PATH: `${bin}:/usr/bin:/bin`, ...env },
      encoding: 'utf8',
    });
    const [arenas, ...args] = out.trimEnd().split('\n');
    return { args, arenas };
  } finally {
    fs.rmSync(bin, { recursive: true, force: true });
  }
}

describe('the worker process and its memory settings (scripts/worker.sh, worker/tuning.ts)', () => {
  it('starts worker/main.ts with the flags and the malloc arenas of worker/tuning.ts, by default', () => {
    const { args, arenas } = launch({});
    expect(arenas).toBe(String(workerMallocArenas));
    expect(args.slice(0, 2).sort()).toEqual([...workerV8Flags(loadConfig({}))].sort());
    expect(args.slice(2)).toEqual(['--import', 'tsx', `${path.dirname(script)}/../worker/main.ts`]);
  });

  it('takes the heap limit from SKILLFLOW_WORKER_HEAP_MB and MALLOC_ARENA_MAX from the environment', () => {
    const { args, arenas } = launch({ SKILLFLOW_WORKER_HEAP_MB: '300', MALLOC_ARENA_MAX: '4' });
    expect(arenas).toBe('4');
    expect(args).toContain('--max-old-space-size=300');
    expect(launch({ SKILLFLOW_WORKER_HEAP_MB: '0' }).args).toContain('--max-old-space-size=0');
  });

  it("passes its own arguments to node, before the entry point (the benchmark's BENCH_WORKER_NODE_ARGS)", () => {
    const { args } = launch({}, ['--cpu-prof', '--cpu-prof-dir=/tmp/profiles']);
    expect(args.slice(2)).toEqual([
      '--cpu-prof',
      '--cpu-prof-dir=/tmp/profiles',
      '--import',
      'tsx',
      `${path.dirname(script)}/../worker/main.ts`,
    ]);
  });

  it('runs the node binary NODE names (npm, npm start and the benchmark set it), else node on PATH', () => {
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'worker-launch-node-'));
    try {
      fs.writeFileSync(path.join(bin, 'other-node'), '#!/bin/sh\necho other-node\n', { mode: 0o755 });
      expect(
        execFileSync('sh', [script], {
          env: { PATH: '/usr/bin:/bin', NODE: path.join(bin, 'other-node') },
          encoding: 'utf8',
        }),
      ).toBe('other-node\n');
    } finally {
      fs.rmSync(bin, { recursive: true, force: true });
    }
  });

  it('passes the default for a value that is not a whole number (the configuration refuses it with its fix)', () => {
    expect(launch({ SKILLFLOW_WORKER_HEAP_MB: '1g' }).args).toContain(`--max-old-space-size=${defaultWorkerHeapMb}`);
    expect(() => loadConfig({ SKILLFLOW_WORKER_HEAP_MB: '1g' })).toThrow(
      /SKILLFLOW_WORKER_HEAP_MB="1g" is not a whole number/,
    );
  });
});

describe('the heap settings (lib/config.ts)', () => {
  it.each([
    [undefined, defaultWorkerHeapMb],
    ['0', 0],
    ['128', 128],
    ['2048', 2048],
  ])('SKILLFLOW_WORKER_HEAP_MB=%s gives %i MB', (raw, heapMb) => {
    expect(loadConfig(raw === undefined ? {} : { SKILLFLOW_WORKER_HEAP_MB: raw }).workerHeapMb).toBe(heapMb);
  });

  it('refuses a limit below what an idle worker needs, with the fix', () => {
    expect(() => loadConfig({ SKILLFLOW_WORKER_HEAP_MB: '64' })).toThrow(
      /SKILLFLOW_WORKER_HEAP_MB=64 is below 128 MB.*or 0 for V8's own limit/,
    );
    expect(() => loadConfig({ SKILLFLOW_WORKER_HEAP_MB: '-1' })).toThrow(/not a whole number/);
  });

  it('gives V8 the old-space limit only when set, and the young generation always', () => {
    expect(workerV8Flags({ workerHeapMb: 300 })).toEqual([
      `--max-semi-space-size=${workerSemiSpaceMb}`,
      '--max-old-space-size=300',
    ]);
    expect(workerV8Flags({ workerHeapMb: 0 })).toEqual([`--max-semi-space-size=${workerSemiSpaceMb}`]);
    expect(expectedHeapLimitMb({ workerHeapMb: 300 })).toBe(300 + 3 * workerSemiSpaceMb);
    expect(expectedHeapLimitMb({ workerHeapMb: 0 })).toBeUndefined();
  });
});

describe('warnings near the heap limit (worker/heap.ts)', () => {
  it.each([
    [100, 524, false],
    [Math.floor(524 * heapWarnShare) - 1, 524, false],
    [Math.ceil(524 * heapWarnShare), 524, true],
    [520, 524, true],
  ])('%i MB used of %i MB: warns %s', (usedMb, limitMb, warns) => {
    const verdict = heapVerdict(usedMb * mb, limitMb * mb);
    expect(verdict === undefined ? false : /Raise SKILLFLOW_WORKER_HEAP_MB/.test(verdict)).toBe(warns);
  });

  it('names the setting when a fatal error says a heap ran out', () => {
    expect(heapFixFor('Worker terminated due to reaching memory limit: JS heap out of memory')).toMatch(
      /SKILLFLOW_WORKER_HEAP_MB/,
    );
    expect(heapFixFor('connection refused')).toBeUndefined();
  });
});
