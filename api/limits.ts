import cors from '@fastify/cors';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type Redis from 'ioredis';
import type { Config } from '../lib/config';
import { isPublicRoute } from './auth';
import { HttpError } from './errors';
import { MemoryWindowStore, RateLimiter, RedisWindowStore, type RateDecision, type WindowStore } from './rate-limits';

/** CORS must answer before auth does, so a browser can read the 401; register it first. */
export async function installCors(app: FastifyInstance, config: Pick<Config, 'corsOrigins'>): Promise<void> {
  if (config.corsOrigins.length === 0) return;
  await app.register(cors, {
    origin: config.corsOrigins.includes('*') ? true : config.corsOrigins,
    methods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
    allowedHeaders: ['authorization', 'content-type', 'last-event-id', 'x-request-id', 'idempotency-key'],
    exposedHeaders: ['retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-request-id', 'location', 'idempotent-replayed'],
    maxAge: 600,
  });
}

/** The API's rate limits; null where the setting turns one off. */
export interface RateLimits {
  /** Requests (and WebSocket frames) per API key or stream-token user. */
  perKey: RateLimiter | null;
  /** Failed authentications per client address. */
  failedAuth: RateLimiter | null;
  /** Readiness probes per client address: each one asks Temporal. */
  readiness: RateLimiter | null;
}

const windowMs = 60_000;
/** Public routes that cost a Temporal call. */
const costlyPublicRoutes = new Set(['/readyz']);

export function createRateLimits(
  config: Pick<Config, 'rateLimitPerMinute' | 'addressRateLimitPerMinute' | 'redisPrefix'>,
  redis: Redis | undefined,
  onStoreError: (err: unknown) => void,
): RateLimits {
  const store: WindowStore = redis ? new RedisWindowStore(redis, `${config.redisPrefix}rate:`) : new MemoryWindowStore();
  const limiter = (max: number) => (max > 0 ? new RateLimiter(store, max, windowMs, onStoreError) : null);
  return {
    perKey: limiter(config.rateLimitPerMinute),
    failedAuth: limiter(config.addressRateLimitPerMinute),
    readiness: limiter(config.addressRateLimitPerMinute),
  };
}

export const keyBucket = (keyId: string) => `key:${keyId}`;

/** 429 `rate_limited` with `retry-after` (seconds), as every limit answers. */
export function rateLimited(decision: RateDecision, what: string): HttpError {
  const seconds = Math.max(1, Math.ceil(decision.resetInMs / 1000));
  return new HttpError(429, 'rate_limited', `Too many requests: at most ${decision.limit} a minute ${what}. Retry in ${seconds} s.`, seconds);
}

/**
 * Before auth: an address that failed to authenticate too often is refused (429) before its key is even looked at,
 * and readiness probes are counted per address. Every 401 counts against the address.
 */
export function installAddressLimits(app: FastifyInstance, limits: RateLimits): void {
  const { failedAuth, readiness } = limits;
  app.addHook('onRequest', async (request: FastifyRequest) => {
    if (request.method === 'OPTIONS') return;
    if (isPublicRoute(request)) {
      if (readiness && costlyPublicRoutes.has(request.routeOptions.url ?? '')) {
        const decision = await readiness.take(`ready:${request.ip}`);
        if (!decision.allowed) throw rateLimited(decision, 'per address');
      }
      return;
    }
    if (!failedAuth) return;
    const decision = await failedAuth.check(`auth:${request.ip}`);
    if (!decision.allowed) throw rateLimited(decision, 'failed authentications per address');
  });
  if (failedAuth) {
    app.addHook('onResponse', async (request, reply) => {
      if (reply.statusCode === 401) await failedAuth.take(`auth:${request.ip}`);
    });
  }
}

/** After auth: every request counts against its API key (or stream-token user). */
export function installKeyLimit(app: FastifyInstance, limits: RateLimits): void {
  const { perKey } = limits;
  if (!perKey) return;
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.method === 'OPTIONS' || isPublicRoute(request) || !request.caller?.keyId) return;
    const decision = await perKey.take(keyBucket(request.caller.keyId));
    void reply.header('x-ratelimit-limit', String(decision.limit));
    void reply.header('x-ratelimit-remaining', String(decision.remaining));
    void reply.header('x-ratelimit-reset', String(Math.ceil(decision.resetInMs / 1000)));
    if (!decision.allowed) throw rateLimited(decision, 'per API key');
  });
}
