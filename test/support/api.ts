import { inspect } from 'node:util';
import type { FastifyInstance } from 'fastify';
import type { Client } from '@temporalio/client';
import { buildApp, type AppOptions } from '../../api/app';
import { loadConfig, type Config } from '../../lib/config';

export const aliceKey = 'alice-key-0123456789abcdef';
export const bobKey = 'bob-key-0123456789abcdef01';
export const operatorKey = 'ops-key-0123456789abcdef01';

export const authHeaders = (key = aliceKey) => ({ authorization: `Bearer ${key}` });

/**
 * The real Fastify app on a test task queue, with three known keys; requests go through `app.inject`. `options` adds
 * what some tests need: the live channel the test worker publishes to, a skill catalog, a fixed stream token secret.
 */
export async function buildTestApp(
  client: Client,
  taskQueue: string,
  env: Record<string, string> = {},
  options: Partial<
    Pick<
      AppOptions,
      | 'live'
      | 'skills'
      | 'streamTokenSecret'
      | 'logger'
      | 'metrics'
      | 'tracer'
      | 'redis'
      | 'feedSettings'
      | 'log'
      | 'links'
      | 'now'
      | 'appDir'
      | 'linkRecheckMs'
    >
  > = {},
): Promise<{ app: FastifyInstance; config: Config }> {
  const config = loadConfig({
    SKILLFLOW_TASK_QUEUE: taskQueue,
    SKILLFLOW_API_KEYS: `${aliceKey}=alice,${bobKey}=bob,${operatorKey}=ops:operator`,
    SKILLFLOW_MODEL_MAX_ATTEMPTS: '2',
    ...env,
  });
  const app = await buildApp({ client, config, apiKeys: config.apiKeys, ...options });
  return { app, config };
}

/** JSON where the value has it; a value JSON cannot write (a cycle, as spans have) by its inspection. */
function describeValue(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return inspect(value, { depth: 2 });
  }
}

export async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting; last value: ${describeValue(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
