import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '..', '..');

export interface ChildWorker {
  process: ChildProcess;
  output: string[];
  stop(): Promise<void>;
}

/** Starts test/support/live-worker-process.ts in another Node process and waits until it polls. */
export async function startChildWorker(env: Record<string, string>, timeoutMs = 60_000): Promise<ChildWorker> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'test/support/live-worker-process.ts')], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`child worker not ready in ${timeoutMs} ms:\n${output.join('')}`)),
      timeoutMs,
    );
    const onData = (chunk: Buffer) => {
      output.push(chunk.toString());
      if (output.join('').includes('ready')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`child worker exited (${code}):\n${output.join('')}`));
    });
  });
  await ready;
  return {
    process: child,
    output,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(kill);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}
