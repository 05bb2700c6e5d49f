import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../lib/dev-server';

const root = path.resolve(__dirname, '..');
/** The variable every process of one run inherits, with a value of its own: found in /proc, a process is the run's. */
const runMarker = 'SKILLFLOW_START_STOP_RUN';
/** Start-up bundles the workflow code in the worker: tens of seconds on a loaded 2-core machine. */
const readyWithinMs = 240_000;
const testTimeoutMs = readyWithinMs + 90_000;

interface Run {
  marker: string;
  child: ChildProcess;
  /** The ports chosen for the run: the Temporal frontend, its UI, the API, the codec. */
  ports: number[];
  temporalPort: number;
  output(): string;
  exited: Promise<void>;
  waitForOutput(pattern: RegExp, timeoutMs: number): Promise<void>;
}

async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

/** `npm start`'s path (or a part of it) in a process group of its own, on unused ports, with a scratch data folder. */
async function startRun(command: string, args: string[]): Promise<Run> {
  const cli = process.env.SKILLFLOW_TEST_TEMPORAL_CLI;
  if (!cli) throw new Error('SKILLFLOW_TEST_TEMPORAL_CLI is not set: run this file through jest (its global setup).');
  const marker = `${process.pid}-${Date.now()}`;
  const [temporalPort, uiPort, apiPort, codecPort] = await distinctFreePorts(4);
  const data = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-start-stop-'));
  const child = spawn(command, args, {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: data,
      npm_config_update_notifier: 'false',
      [runMarker]: marker,
      SKILLFLOW_DATA_DIR: data,
      SKILLFLOW_CACHE_DIR: path.join(data, 'cache'),
      TEMPORAL_CLI: cli,
      TEMPORAL_ADDRESS: `127.0.0.1:${temporalPort}`,
      SKILLFLOW_TEMPORAL_UI_PORT: String(uiPort),
      PORT: String(apiPort),
      SKILLFLOW_CODEC_PORT: String(codecPort),
      SKILLFLOW_APP: 'off',
    },
  });
  let output = '';
  const waiters = new Set<() => void>();
  const take = (chunk: Buffer) => {
    output += chunk.toString();
    for (const waiter of waiters) waiter();
  };
  child.stdout!.on('data', take);
  child.stderr!.on('data', take);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', () => waiters.forEach((waiter) => waiter()));
  const waitForOutput = (pattern: RegExp, timeoutMs: number) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => settle(new Error(`no ${pattern} within ${timeoutMs / 1000} s`)), timeoutMs);
      const check = () => {
        if (pattern.test(output)) settle();
        else if (child.exitCode !== null || child.signalCode !== null) settle(new Error(`exited before ${pattern}`));
      };
      const settle = (err?: Error) => {
        clearTimeout(timer);
        waiters.delete(check);
        if (err) reject(new Error(`${err.message}. Output:\n${output}`));
        else resolve();
      };
      waiters.add(check);
      check();
    });
  return {
    marker,
    child,
    ports: [temporalPort, uiPort, apiPort, codecPort],
    temporalPort,
    output: () => output,
    exited,
    waitForOutput,
  };
}

interface ProcessEntry {
  pid: number;
  ppid: number;
  state: string;
  /** Clock ticks after boot: with the pid, names one process even when the pid is reused. */
  startTime: string;
}

function readProcess(pid: number): ProcessEntry | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command name in parentheses (which may hold spaces): state, ppid, ..., starttime (field 22).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { pid, state: fields[0], ppid: Number(fields[1]), startTime: fields[19] };
  } catch {
    return undefined;
  }
}

const allPids = () =>
  fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number);

/** The process and all its descendants, as /proc has them now. */
function processTree(rootPid: number): ProcessEntry[] {
  const entries = allPids().flatMap((pid) => readProcess(pid) ?? []);
  const tree = entries.filter((entry) => entry.pid === rootPid);
  for (let i = 0; i < tree.length; i++) tree.push(...entries.filter((entry) => entry.ppid === tree[i].pid));
  return tree;
}

function commandLine(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim().slice(0, 200);
  } catch {
    return '?';
  }
}

function carriesMarker(pid: number, marker: string): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`${runMarker}=${marker}`);
  } catch {
    return false;
  }
}

/**
 * The run's processes still alive (zombies are gone): those recorded before the signal, and any other that inherited
 * the run's marker (started later, or moved to init when its parent died).
 */
function leftovers(run: Run, recorded: ProcessEntry[]): string[] {
  const alive = (entry: ProcessEntry | undefined) => entry !== undefined && entry.state !== 'Z';
  const left = new Set<number>();
  for (const entry of recorded) {
    const now = readProcess(entry.pid);
    if (alive(now) && now!.startTime === entry.startTime) left.add(entry.pid);
  }
  for (const pid of allPids()) if (carriesMarker(pid, run.marker) && alive(readProcess(pid))) left.add(pid);
  return [...left].map((pid) => `${pid}: ${commandLine(pid)}`);
}

/** Polls until none of the run's processes is left, or the deadline; answers what is left. */
async function leftoversAfter(run: Run, recorded: ProcessEntry[], timeoutMs: number): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = leftovers(run, recorded);
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function portsInUse(ports: number[]): Promise<number[]> {
  const taken = await Promise.all(
    ports.map(
      (port) =>
        new Promise<boolean>((resolve) => {
          const server = net.createServer();
          server.once('error', () => resolve(true));
          server.listen(port, '127.0.0.1', () => server.close(() => resolve(false)));
        }),
    ),
  );
  return ports.filter((_, i) => taken[i]);
}

async function portAnswers(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on ${port} after ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}

async function withDeadline<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${timeoutMs / 1000} s`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('stopping `npm start`', () => {
  let run: Run | undefined;

  afterEach(() => {
    // What a failed test leaves behind: only processes of this run (its marker), never another's.
    if (!run) return;
    for (const pid of allPids()) if (carriesMarker(pid, run.marker)) killQuietly(pid);
    run = undefined;
  });

  const ready = /skillflow is running\. Press Ctrl-C to stop everything\./;

  it(
    "SIGTERM to npm alone (a supervisor's, `timeout`'s) stops every process of the run and frees its ports",
    async () => {
      run = await startRun('npm', ['start']);
      await run.waitForOutput(ready, readyWithinMs);
      const recorded = processTree(run.child.pid!);
      expect(recorded.length).toBeGreaterThan(5);

      process.kill(run.child.pid!, 'SIGTERM');
      await withDeadline(run.exited, 60_000, 'npm did not exit');
      // npm waits for the run: once it is gone, so are the servers (their helpers may take a moment longer).
      expect(await portsInUse(run.ports)).toEqual([]);
      expect(await leftoversAfter(run, recorded, 30_000)).toEqual([]);
      expect(run.output()).toContain('[start] Stopped.');
    },
    testTimeoutMs,
  );

  it(
    'the start-up stops with its shell: the Temporal dev server it started is stopped too',
    async () => {
      // As npm runs a script (`sh -c`): the shell dies of a SIGTERM, the script's process never receives it.
      run = await startRun('sh', ['-c', 'node scripts/bootstrap.mjs start']);
      await run.waitForOutput(/Starting the Temporal dev server/, readyWithinMs);
      await portAnswers(run.temporalPort, 60_000);
      const recorded = processTree(run.child.pid!);

      process.kill(run.child.pid!, 'SIGTERM');
      await withDeadline(run.exited, 10_000, 'the shell did not exit');
      expect(await leftoversAfter(run, recorded, 60_000)).toEqual([]);
      expect(await portsInUse(run.ports)).toEqual([]);
    },
    testTimeoutMs,
  );

  it(
    'Ctrl-C (SIGINT to the whole process group) stops every process of the run and frees its ports',
    async () => {
      run = await startRun(process.execPath, ['scripts/bootstrap.mjs', 'start']);
      await run.waitForOutput(ready, readyWithinMs);
      const recorded = processTree(run.child.pid!);

      process.kill(-run.child.pid!, 'SIGINT');
      await withDeadline(run.exited, 60_000, 'the run did not exit');
      expect(await leftoversAfter(run, recorded, 30_000)).toEqual([]);
      expect(await portsInUse(run.ports)).toEqual([]);
      expect(run.output()).toContain('[start] Stopped.');
    },
    testTimeoutMs,
  );
});
