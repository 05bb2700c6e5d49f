import Redis from 'ioredis';
import pg from 'pg';

/** PostgreSQL and Redis as the topology uses them: the machine's running services, checked up front. */

export const postgresUrl = () =>
  process.env.SKILLFLOW_TOPOLOGY_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
export const redisUrl = () => process.env.SKILLFLOW_TOPOLOGY_REDIS_URL || 'redis://127.0.0.1:6379';

export class MissingServiceError extends Error {
  override name = 'MissingServiceError';
}

export async function requireServices(): Promise<void> {
  const problems: string[] = [];
  const admin = new pg.Client({ connectionString: postgresUrl(), connectionTimeoutMillis: 3_000 });
  try {
    await admin.connect();
    await admin.query('SELECT 1');
  } catch (err) {
    problems.push(`PostgreSQL is not reachable at ${postgresUrl()} (${(err as Error).message})`);
  } finally {
    await admin.end().catch(() => undefined);
  }
  const redis = new Redis(redisUrl(), {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 3_000,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    problems.push(`Redis is not reachable at ${redisUrl()} (${(err as Error).message})`);
  } finally {
    redis.disconnect();
  }
  if (problems.length > 0) {
    throw new MissingServiceError(
      `The topology suite runs against real PostgreSQL and Redis services and cannot run without them:\n  - ${problems.join('\n  - ')}\n` +
        'Start them (`.ci/run` installs and starts both when they are missing: apt-get install -y postgresql redis-server), ' +
        'or point SKILLFLOW_TOPOLOGY_POSTGRES_URL (a role that may create databases) and SKILLFLOW_TOPOLOGY_REDIS_URL at yours.',
    );
  }
}

/** Drops the databases if they exist (a previous run's) and creates the store's; Temporal's are created by its schema job. */
export async function dropDatabases(names: string[]): Promise<void> {
  const admin = new pg.Client({ connectionString: postgresUrl() });
  await admin.connect();
  try {
    for (const name of names) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

export async function createDatabase(name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: postgresUrl() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(postgresUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

export function postgresParts(): { host: string; port: number; user: string; password: string } {
  const url = new URL(postgresUrl());
  return {
    host: url.hostname,
    port: Number(url.port || 5432),
    user: decodeURIComponent(url.username || 'postgres'),
    password: decodeURIComponent(url.password),
  };
}
