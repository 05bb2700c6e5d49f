import { randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiKey, Config } from '../lib/config';
import { HttpError } from './errors';

export interface Caller {
  id: string;
  operator: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller;
  }
}

const localCaller: Caller = { id: 'local', operator: true };

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

export function installAuth(app: FastifyInstance, keys: ApiKey[], enabled: boolean, publicPaths: Set<string>): void {
  app.decorateRequest('caller', null as unknown as Caller);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    if (!enabled) {
      request.caller = localCaller;
      return;
    }
    const route = request.routeOptions.url;
    if (route === undefined || publicPaths.has(route) || route.startsWith('/docs')) return;
    const header = request.headers.authorization;
    const given = header?.startsWith('Bearer ') ? header.slice('Bearer '.length).trim() : undefined;
    if (!given) throw new HttpError(401, 'unauthorized', 'Send your API key as "Authorization: Bearer <key>".');
    const key = keys.find((candidate) => matches(candidate.key, given));
    if (!key) throw new HttpError(401, 'unauthorized', 'That API key is not valid.');
    request.caller = { id: key.user, operator: key.operator };
  });
}
