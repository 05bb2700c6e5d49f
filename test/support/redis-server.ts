import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '../../lib/dev-server';

export interface RedisServer {
  url: string;
  port: number;
  /** Freezes the server (SIGSTOP): connections stay open and nothing is answered, as a Redis that hangs. */
  freeze(): void;
  /** Lets it run again (SIGCONT): it answers what it was sent meanwhile. */
  thaw(): void;
  stop(): Promise<void>;
}

/**
 * A redis-server of the test's own on a loopback port (a free one, or `port` to bring one back where it was), nothing
 * persisted: for tests that stop Redis, which must never be done to the machine's shared service.
 */
export async function startRedisServer(port?: number): Promise<RedisServer> {
  const chosen = port ?? (await freePort());
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(chosen), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 10_000);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(
        new Error(
          `redis-server could not be run (${err.message}): install it (apt-get install -y redis-server; .ci/run does).`,
        ),
      );
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}):\n${output}`)));
  });
  return {
    url: `redis://127.0.0.1:${chosen}`,
    port: chosen,
    freeze: () => child.kill('SIGSTOP'),
    thaw: () => child.kill('SIGCONT'),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        // A frozen server gets its SIGTERM once it runs again.
        child.kill('SIGCONT');
      }),
  };
}
