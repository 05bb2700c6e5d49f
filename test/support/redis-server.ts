import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { freePort } from '../../lib/dev-server';

export interface RedisServer {
  url: string;
  stop(): Promise<void>;
}

/** Why Redis tests cannot run here, or null when a redis-server binary is on PATH. */
export function redisUnavailableReason(): string | null {
  const found = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  return found.error || found.status !== 0 ? 'no redis-server on PATH (install it, e.g. apt-get install redis-server, to run these)' : null;
}

/** A throwaway redis-server on a free loopback port, nothing persisted. */
export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 10_000);
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
    url: `redis://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
