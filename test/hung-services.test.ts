import { execFileSync } from 'node:child_process';
import Redis from 'ioredis';
import { zeroUsage } from '../core/model';
import type { TurnSnapshot } from '../core/turn-snapshot';
import { GuardedRedis } from '../lib/guarded-redis';
import type { OpsLevel } from '../lib/logging';
import { RedisChannel } from '../lib/live';
import { PostgresStore, RedisStore, SharedStoreError } from '../lib/store';
import { eventually } from './support/api';
import { startRedisServer, type RedisServer } from './support/redis-server';
import { createTestDatabase, requireRedis, testPostgresUrl, testRedisUrl } from './support/services';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy';

/**
 * Issue 24.10: a Redis or PostgreSQL that hangs (frozen: its connections stay open, nothing is answered) makes no caller
 * wait past its deadline, is logged once as hung, and its return at info. Redis is a redis-server of the test's own,
 * frozen with SIGSTOP; PostgreSQL is the suite's, behind a proxy of the test's own that stops forwarding.
 */
const hour = 3_600_000;
const deadlineMs = 300;

/** Operational lines as logged, with their level. */
function opsLines() {
  const lines: Array<{ line: string; level: OpsLevel }> = [];
  const log = (line: string, level: OpsLevel = 'warn') => void lines.push({ line, level });
  const matching = (pattern: RegExp) => lines.filter((entry) => pattern.test(entry.line));
  /** Waits for a line matching `pattern`, up to `timeoutMs`. */
  const heard = async (pattern: RegExp, timeoutMs = 10_000) => {
    const until = Date.now() + timeoutMs;
    while (matching(pattern).length === 0) {
      if (Date.now() > until)
        throw new Error(`no line matching ${pattern} within ${timeoutMs} ms; lines: ${JSON.stringify(lines)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return matching(pattern)[0];
  };
  /** Drops what was logged so far: a loaded machine may make a service miss a deadline before the test breaks it. */
  const forget = () => void lines.splice(0);
  return { lines, log, matching, heard, forget };
}

/**
 * What `call` gives once it succeeds, calling it again while it fails (up to 20 s): with deadlines this short, a loaded
 * machine can make a service that is well miss one before the test freezes it, or just after it thawed.
 */
async function passes<T>(call: () => Promise<T>): Promise<T> {
  const failed = Symbol('failed');
  const outcome = await eventually(
    () => call().catch(() => failed),
    (value) => value !== failed,
  );
  return outcome as T;
}

/** Settles with what `work` settles with, or with 'still waiting' once `ms` passed. */
async function within<T>(ms: number, work: Promise<T>) {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'still waiting'>((resolve) => (timer = setTimeout(() => resolve('still waiting'), ms)));
  try {
    return await Promise.race([
      work.then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      ),
      expired,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

const snapshot: TurnSnapshot = {
  offset: 3,
  state: {
    turnId: 'turn-h-1',
    sessionId: 'h',
    userId: 'u',
    status: 'waiting',
    usage: zeroUsage(),
    modelCalls: 1,
    pendingCheckpoint: null,
    skill: null,
    step: null,
    remaining: [],
    createdAt: '',
    updatedAt: '',
  },
};

describe('a Redis that hangs', () => {
  let redis: RedisServer;
  beforeEach(async () => {
    redis = await startRedisServer();
  });
  afterEach(async () => {
    await redis?.stop();
  });

  it('live channel: a kept state read gives up at the deadline (then at once), is logged once as hung, and its return at info', async () => {
    const ops = opsLines();
    const channel = new RedisChannel(redis.url, { prefix: 'hang:', log: ops.log, deadlineMs });
    try {
      // The publishing connection drops what it cannot send at once: publish until the state is kept.
      await eventually(
        async () => {
          channel.publishState('turn-h-1', snapshot);
          return channel.latestState('turn-h-1');
        },
        (kept) => kept !== undefined,
      );

      ops.forget();
      redis.freeze();
      // While frozen (it stays frozen until these have answered): undefined, so the reader asks the workflow.
      expect(await within(10 * deadlineMs, channel.latestState('turn-h-1'))).toEqual({ value: undefined });
      const second = within(deadlineMs, channel.latestState('turn-h-1'));
      channel.publish('turn-h-1', { type: 'message.delta', text: 'dropped', call: '1', attempt: 1 });
      expect(await second).toEqual({ value: undefined });
      expect(ops.matching(/did not answer/)).toEqual([
        {
          line: `live events: Redis at 127.0.0.1:${redis.port} did not answer within ${deadlineMs} ms (hung?): deltas are dropped and turn reads ask the workflow until it answers`,
          level: 'warn',
        },
      ]);

      redis.thaw();
      expect((await ops.heard(/answers again/)).level).toBe('info');
      expect(await channel.latestState('turn-h-1')).toEqual({ ...snapshot, runId: undefined });
      expect(ops.matching(/did not answer/)).toHaveLength(1);
    } finally {
      await channel.close();
    }
  });

  it('Redis store: a call gives up at the deadline with a SharedStoreError saying so, then at once; logged once, and its return at info', async () => {
    const ops = opsLines();
    const store = new RedisStore(redis.url, 'hang:', hour, deadlineMs, ops.log);
    try {
      await passes(() => store.put('scope', 'key', 'value'));
      ops.forget();
      redis.freeze();
      const first = await within(10 * deadlineMs, store.get('scope', 'key'));
      expect(first).toEqual({ error: expect.any(SharedStoreError) });
      expect(String((first as { error: Error }).error.message)).toBe(
        `Redis store unavailable: store: Redis at 127.0.0.1:${redis.port} is not answering (no reply within ${deadlineMs} ms)`,
      );
      expect(await within(deadlineMs, store.put('scope', 'other', 'value'))).toEqual({
        error: expect.any(SharedStoreError),
      });
      expect(ops.matching(/did not answer/)).toHaveLength(1);

      redis.thaw();
      expect((await ops.heard(/answers again/)).level).toBe('info');
      expect(await passes(() => store.get('scope', 'key'))).toBe('value');
    } finally {
      await store.close();
    }
  });

  it("Redis store: a write that fails because Redis went away names the cause, not ioredis's retry count; the return is logged at info", async () => {
    const ops = opsLines();
    const store = new RedisStore(redis.url, 'gone:', hour, 2_000, ops.log);
    try {
      await store.put('scope', 'key', 'value');
      const port = redis.port;
      await redis.stop();
      const failed = await store.put('scope', 'key2', 'value').then(
        () => 'written',
        (err: Error) => err.message,
      );
      expect(failed).toMatch(/^Redis store unavailable: connection lost: .*ECONNREFUSED/);
      expect(failed).not.toMatch(/max retries/i);
      expect((await ops.heard(/unavailable \(.*ECONNREFUSED/)).level).toBe('warn');

      redis = await startRedisServer(port);
      expect((await ops.heard(/connection ready again/)).level).toBe('info');
      // The restarted Redis holds nothing: the write goes through again.
      await store.put('scope', 'key3', 'value');
    } finally {
      await store.close();
    }
  });
});

describe('a busy process is not a hung Redis', () => {
  it('an answer that came while the event loop was blocked past the deadline is taken, and Redis is not taken for hung', async () => {
    await requireRedis();
    const ops = opsLines();
    const client = new Redis(testRedisUrl());
    const guarded = new GuardedRedis(client, { what: 'Redis', deadlineMs: 50, meanwhile: 'nothing', log: ops.log });
    try {
      await guarded.run((redis) => redis.ping());
      const answer = guarded.run((redis) => redis.ping());
      // The event loop blocked past the deadline (a long GC pause, a CPU-starved machine): at least four times it, and
      // until Redis has answered, however slow the machine: another client's PING, sent after ours, got its answer
      // (Redis runs commands one at a time, in the order they came). The reply waits in the socket, read after.
      const until = Date.now() + 200;
      execFileSync('redis-cli', ['-u', testRedisUrl(), 'ping'], { stdio: 'ignore', timeout: 30_000 });
      while (Date.now() < until);
      expect(await answer).toBe('PONG');
      expect([guarded.guard.hung, ops.lines]).toEqual([false, []]);
    } finally {
      guarded.guard.close();
      client.disconnect();
    }
  });
});

describe("a PostgreSQL store that hangs or goes away (behind a proxy of the test's own)", () => {
  let database: { url: string; drop(): Promise<void> };
  let proxy: TcpProxy;
  let url: string;
  beforeAll(async () => {
    database = await createTestDatabase('hang');
    const upstream = new URL(testPostgresUrl());
    proxy = await startTcpProxy(Number(upstream.port || 5432), upstream.hostname);
    const through = new URL(database.url);
    through.host = `${proxy.host}:${proxy.port}`;
    url = through.toString();
  });
  afterAll(async () => {
    await proxy?.close();
    await database?.drop();
  });

  it('a hung PostgreSQL: a call gives up at the deadline, the next at once; logged once as hung, and its return at info', async () => {
    const ops = opsLines();
    const store = new PostgresStore(url, 'hang', hour, deadlineMs, ops.log);
    try {
      await passes(() => store.put('scope', 'key', 'value'));
      ops.forget();
      proxy.freeze();
      expect(await within(10 * deadlineMs, store.get('scope', 'key'))).toEqual({ error: expect.any(SharedStoreError) });
      expect(await within(deadlineMs, store.get('scope', 'key'))).toEqual({ error: expect.any(SharedStoreError) });
      expect(ops.matching(/did not answer/)).toEqual([
        {
          line: `store: PostgreSQL at ${proxy.host}:${proxy.port}${new URL(url).pathname} (namespace hang) did not answer within ${deadlineMs} ms (hung?): turns send whole conversations (model calls cost more, nothing is lost) until it answers`,
          level: 'warn',
        },
      ]);
      proxy.thaw();
      expect((await ops.heard(/answers again/)).level).toBe('info');
      expect(await passes(() => store.get('scope', 'key'))).toBe('value');
    } finally {
      proxy.thaw();
      await store.close();
    }
  });

  it('a PostgreSQL that went away: logged once with its cause, and its return at info', async () => {
    const ops = opsLines();
    const store = new PostgresStore(url, 'gone', hour, 2_000, ops.log);
    try {
      await store.put('scope', 'key', 'value');
      ops.forget();
      proxy.cut();
      await expect(store.get('scope', 'key')).rejects.toBeInstanceOf(SharedStoreError);
      await expect(store.get('scope', 'key')).rejects.toBeInstanceOf(SharedStoreError);
      expect(ops.matching(/unavailable/)).toHaveLength(1);
      expect(ops.matching(/unavailable/)[0].level).toBe('warn');
      proxy.restore();
      expect(await store.get('scope', 'key')).toBe('value');
      expect(ops.matching(/answering again/)).toEqual([
        { line: expect.stringMatching(/^store: PostgreSQL at .* answering again$/), level: 'info' },
      ]);
    } finally {
      proxy.restore();
      await store.close();
    }
  });
});
