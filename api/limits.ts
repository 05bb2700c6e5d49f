import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../lib/config';
import { isPublicRoute } from './auth';
import { HttpError } from './errors';

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

/** Per API key (after auth has named the caller); unauthenticated requests count per address. */
export async function installRateLimit(app: FastifyInstance, config: Pick<Config, 'rateLimitPerMinute'>): Promise<void> {
  if (config.rateLimitPerMinute <= 0) return;
  await app.register(rateLimit, {
    global: true,
    hook: 'onRequest',
    max: config.rateLimitPerMinute,
    timeWindow: 60_000,
    keyGenerator: (request) => (request.caller?.keyId ? `key:${request.caller.keyId}` : `ip:${request.ip}`),
    allowList: (request) => isPublicRoute(request) || request.method === 'OPTIONS',
    errorResponseBuilder: (_request, context) =>
      new HttpError(429, 'rate_limited', `Too many requests: at most ${context.max} a minute per API key. Retry in ${context.after}.`),
  });
}
