import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import pg from 'pg';

/**
 * The Redis and PostgreSQL services the suite runs against (every machine and CI runs both; `.ci/run` starts them when
 * they are not running). Tests that need one fail with this message when it is not there: they never skip.
 */
export const testRedisUrl = () => process.env.SKILLFLOW_TEST_REDIS_URL || 'redis://127.0.0.1:6379';
export const testPostgresUrl = () =>
  process.env.SKILLFLOW_TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

/** A key prefix no other test run, engineer or deployment uses on the shared Redis. */
export const uniqueRedisPrefix = (what: string) => `skillflow-test:${what}:${randomBytes(6).toString('hex')}:`;

export async function requireRedis(url = testRedisUrl()): Promise<void> {
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 3_000,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
  } catch (err) {
    throw new Error(
      `Redis is not reachable at ${url} (${(err as Error).message}). These tests need a running Redis: start the service ` +
        '(`apt-get install -y redis-server && redis-server --daemonize yes`, which .ci/run does) or point ' +
        'SKILLFLOW_TEST_REDIS_URL at one.',
    );
  } finally {
    client.disconnect();
  }
}

/** A fresh database of this test's own on the suite's PostgreSQL; `drop()` removes it. */
export async function createTestDatabase(what: string): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = testPostgresUrl();
  const name = `skillflow_test_${what}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3_000 });
  try {
    await admin.connect();
  } catch (err) {
    throw new Error(
      `PostgreSQL is not reachable at ${adminUrl} (${(err as Error).message}). These tests need a running PostgreSQL with a ` +
        'role that may create databases: start the service (`apt-get install -y postgresql`, which .ci/run does) or point ' +
        'SKILLFLOW_TEST_POSTGRES_URL at one.',
    );
  }
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * Closes the one connection named `name` on the test Redis from the server's side (CLIENT KILL), as a network fault or
 * a Redis restart does; the client reconnects by itself. Only a connection of this test's own, never by a shared name.
 */
export async function killRedisConnection(name: string, url = testRedisUrl()): Promise<void> {
  const admin = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    const list = String(await admin.call('CLIENT', 'LIST'));
    const ids = list
      .split('\n')
      .filter((line) => line.includes(` name=${name} `))
      .map((line) => /^id=(\d+)/.exec(line)?.[1]);
    if (ids.length !== 1 || !ids[0])
      throw new Error(`expected one Redis connection named ${name}, found ${ids.length}`);
    const killed = await admin.call('CLIENT', 'KILL', 'ID', ids[0]);
    if (Number(killed) !== 1) throw new Error(`CLIENT KILL ID ${ids[0]} closed ${String(killed)} connections`);
  } finally {
    admin.disconnect();
  }
}
