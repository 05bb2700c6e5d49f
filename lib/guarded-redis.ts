import type Redis from 'ioredis';
import { HangGuard, type HangGuardOptions } from './hang-guard';

/** An ioredis connection whose commands go through a HangGuard (PING is its probe). */
export class GuardedRedis {
  readonly guard: HangGuard;

  constructor(
    readonly client: Redis,
    options: Omit<HangGuardOptions, 'probe'>,
  ) {
    this.guard = new HangGuard({ ...options, probe: () => client.ping() });
  }

  /** Runs commands on the connection within the guard's deadline; rejects at once while Redis is taken for hung. */
  run<T>(command: (client: Redis) => Promise<T>): Promise<T> {
    return this.guard.call(() => command(this.client));
  }
}

/** `host:port` of a Redis URL, for logs (no credentials). */
export function redisHostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the configured Redis';
  }
}
