import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiKey, Config } from '../lib/config';
import { HttpError } from './errors';
import type { StreamTokens } from './stream-tokens';

export interface Caller {
  id: string;
  operator: boolean;
  /** What rate limits count against: a fingerprint of the API key, or the user of a stream token. */
  keyId?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller;
  }
  interface FastifyContextConfig {
    /** The route also accepts `?token=` (a stream token for the turn in `:id`) instead of the Authorization header. */
    streamToken?: boolean;
    /** No key needed: health, docs and the OpenAPI document. */
    public?: boolean;
  }
}

const localCaller: Caller = { id: 'local', operator: true, keyId: 'local' };

/**
 * The keys the API accepts: SKILLFLOW_API_KEYS, else one generated on first start and kept in the data dir, so the
 * API is never silently open. SKILLFLOW_AUTH=off is the explicit opt-out.
 */
export function resolveApiKeys(config: Config, announce: (line: string) => void): ApiKey[] {
  if (!config.authEnabled) return [];
  if (config.apiKeys.length > 0) return config.apiKeys;
  const file = path.join(config.dataDir, 'api-key');
  let key: string;
  if (fs.existsSync(file)) {
    key = fs.readFileSync(file, 'utf8').trim();
  } else {
    key = `sk-sf-${randomBytes(24).toString('base64url')}`;
    fs.mkdirSync(config.dataDir, { recursive: true });
    fs.writeFileSync(file, `${key}\n`, { mode: 0o600 });
  }
  announce(`API key (generated, kept in ${file}): ${key}`);
  return [{ key, user: 'local', operator: true }];
}

function matches(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

const fingerprint = (key: string) => createHash('sha256').update(key).digest('base64url').slice(0, 16);

export function isPublicRoute(request: FastifyRequest): boolean {
  const route = request.routeOptions.url;
  return route === undefined || request.routeOptions.config?.public === true || route.startsWith('/docs');
}

export function installAuth(app: FastifyInstance, keys: ApiKey[], enabled: boolean, tokens: StreamTokens): void {
  app.decorateRequest('caller', null as unknown as Caller);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    if (!enabled) {
      request.caller = localCaller;
      return;
    }
    // CORS preflights carry no credentials; @fastify/cors answers them.
    if (request.method === 'OPTIONS' || isPublicRoute(request)) return;
    const header = request.headers.authorization;
    const token = (request.query as { token?: unknown } | undefined)?.token;
    if (!header && typeof token === 'string' && request.routeOptions.config?.streamToken) {
      request.caller = tokens.verify(token, (request.params as { id?: string }).id ?? '');
      return;
    }
    const given = header?.startsWith('Bearer ') ? header.slice('Bearer '.length).trim() : undefined;
    if (!given) throw new HttpError(401, 'unauthorized', 'Send your API key as "Authorization: Bearer <key>".');
    const key = keys.find((candidate) => matches(candidate.key, given));
    if (!key) throw new HttpError(401, 'unauthorized', 'That API key is not valid.');
    request.caller = { id: key.user, operator: key.operator, keyId: fingerprint(key.key) };
  });
}
