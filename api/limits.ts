import cors from '@fastify/cors';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { GuardedRedis } from '../lib/guarded-redis';
import type { Config } from '../lib/config';
import { addressBucketOf } from '../lib/client-addresses';
import { isPublicRoute, type FailedAuthentication } from './auth';
import type { Caller } from './caller';
import { HttpError } from './errors';
import {
  MemoryWindowStore,
  RateLimiter,
  RedisWindowStore,
  type RateDecision,
  type WindowStore,
} from '../lib/rate-limits';

/** CORS must answer before auth does, so a browser can read the 401; register it first. */
export async function installCors(app: FastifyInstance, config: Pick<Config, 'corsOrigins'>): Promise<void> {
  if (config.corsOrigins.length === 0) return;
  await app.register(cors, {
    origin: config.corsOrigins.includes('*') ? true : config.corsOrigins,
    methods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
    allowedHeaders: ['authorization', 'content-type', 'last-event-id', 'x-request-id', 'idempotency-key'],
    exposedHeaders: [
      'retry-after',
      'x-ratelimit-limit',
      'x-ratelimit-remaining',
      'x-ratelimit-reset',
      'x-request-id',
      'location',
      'idempotent-replayed',
    ],
    maxAge: 600,
  });
}

/** The API's rate limits; null where the setting turns one off. */
export interface RateLimits {
  /** Requests (and WebSocket frames) per user: every API key and stream token of the user counts in one budget. */
  perUser: RateLimiter | null;
  /** Failed authentications per client address (an IPv6 address by its /64). */
  failedAuth: RateLimiter | null;
  /** Readiness probes per client address: each one asks Temporal. */
  readiness: RateLimiter | null;
}

const windowMs = 60_000;
/** Public routes that cost a Temporal call. */
const costlyPublicRoutes = new Set(['/readyz']);

export function createRateLimits(
  config: Pick<Config, 'rateLimitPerMinute' | 'addressRateLimitPerMinute' | 'redisPrefix'>,
  redis: GuardedRedis | undefined,
  onStoreError: (err: unknown) => void,
): RateLimits {
  const store: WindowStore = redis
    ? new RedisWindowStore(redis, `${config.redisPrefix}rate:`)
    : new MemoryWindowStore();
  const limiter = (max: number) => (max > 0 ? new RateLimiter(store, max, windowMs, onStoreError) : null);
  return {
    perUser: limiter(config.rateLimitPerMinute),
    failedAuth: limiter(config.addressRateLimitPerMinute),
    readiness: limiter(config.addressRateLimitPerMinute),
  };
}

export const userBucket = (caller: Pick<Caller, 'id'>) => `user:${caller.id}`;

/** 429 `rate_limited` with `retry-after` (seconds), as every limit answers. */
export function rateLimited(decision: RateDecision, what: string): HttpError {
  const seconds = Math.max(1, Math.ceil(decision.resetInMs / 1000));
  return new HttpError(
    429,
    'rate_limited',
    `Too many requests: at most ${decision.limit} a minute ${what}. Retry in ${seconds} s.`,
    seconds,
  );
}

/** Before auth: readiness probes are counted per client address. */
export function installAddressLimits(app: FastifyInstance, limits: RateLimits): void {
  const { readiness } = limits;
  if (!readiness) return;
  app.addHook('onRequest', async (request: FastifyRequest) => {
    if (
      request.method === 'OPTIONS' ||
      !isPublicRoute(request) ||
      !costlyPublicRoutes.has(request.routeOptions.url ?? '')
    )
      return;
    const decision = await readiness.take(`ready:${addressBucketOf(request.ip)}`);
    if (!decision.allowed) throw rateLimited(decision, 'per address');
  });
}

/**
 * What a failed authentication answers: its 401, counted against the client's address; beyond the limit a 429. Only
 * failures are counted and refused: a request with a valid key or token is never refused for its address, so one
 * client guessing behind a shared address (a proxy, a NAT) does not lock out the others.
 */
export function failedAuthLimit(limits: RateLimits): FailedAuthentication {
  const { failedAuth } = limits;
  return async (request, refusal) => {
    if (!failedAuth) return refusal;
    const decision = await failedAuth.take(`auth:${addressBucketOf(request.ip)}`);
    return decision.allowed
      ? refusal
      : rateLimited(decision, 'failed authentications per address (requests with a valid key are not refused)');
  };
}

/** After auth: every request counts against its user, whichever of the user's keys or stream tokens it came with. */
export function installUserLimit(app: FastifyInstance, limits: RateLimits): void {
  const { perUser } = limits;
  if (!perUser) return;
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.method === 'OPTIONS' || isPublicRoute(request) || !request.caller) return;
    const decision = await perUser.take(userBucket(request.caller));
    void reply.header('x-ratelimit-limit', String(decision.limit));
    void reply.header('x-ratelimit-remaining', String(decision.remaining));
    void reply.header('x-ratelimit-reset', String(Math.ceil(decision.resetInMs / 1000)));
    if (!decision.allowed) throw rateLimited(decision, 'per user');
  });
}
