import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import path from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ConfigError, minSecretBytes, type ApiKey, type Config } from '../lib/config';
import { HttpError } from './errors';
import { readOrCreateSecretFile } from '../lib/secret-files';
import type { Caller } from './caller';
import { LinkAccessTokens } from './links/access-tokens';
import type { AnswerLinks } from './links/answer-links';
import type { StreamTokens } from './stream-tokens';

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

const localCaller: Caller = { id: 'local', operator: true };

/**
 * The keys the API accepts: SKILLFLOW_API_KEYS, else one generated on first start and kept in the data dir, so the
 * API is never silently open. SKILLFLOW_AUTH=off is the explicit opt-out. A generated key is printed once, when it
 * is created; later starts print its fingerprint, so the key itself does not pile up in container logs.
 */
export function resolveApiKeys(config: Config, announce: (line: string) => void): ApiKey[] {
  if (!config.authEnabled) return [];
  if (config.apiKeys.length > 0) return config.apiKeys;
  const file = path.join(config.secretsDir, 'api-key');
  const { value: key, created } = readOrCreateSecretFile(
    file,
    () => `sk-sf-${randomBytes(minSecretBytes).toString('base64url')}`,
  );
  if (key.length < minSecretBytes) {
    throw new ConfigError(
      `${file} holds a key of ${key.length} characters; it must have at least ${minSecretBytes}. Delete the file to generate a new key.`,
    );
  }
  if (created) announce(`API key (generated and kept in ${file}; shown this once): ${key}`);
  else announce(`API key: the one kept in ${file} (fingerprint ${fingerprint(key)})`);
  return [{ key, user: 'local', operator: true }];
}

function matches(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** What rate limits and logs name a key by: a hash prefix, never the key. */
export const fingerprint = (key: string) => createHash('sha256').update(key).digest('base64url').slice(0, 16);

export function isPublicRoute(request: FastifyRequest): boolean {
  const route = request.routeOptions.url;
  return route === undefined || request.routeOptions.config?.public === true || route.startsWith('/docs');
}

/** What a failed authentication answers instead of `refusal` (api/limits.ts counts failures per address). */
export type FailedAuthentication = (request: FastifyRequest, refusal: HttpError) => Promise<HttpError>;

/** What a request may authenticate with: API keys, stream tokens, and answer links' access tokens. */
export interface Credentials {
  keys: ApiKey[];
  tokens: StreamTokens;
  links: AnswerLinks;
}

export function installAuth(
  app: FastifyInstance,
  credentials: Credentials,
  enabled: boolean,
  failed: FailedAuthentication,
): void {
  app.decorateRequest('caller', null as unknown as Caller);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    // With auth off an answer link still limits its holder: the page behaves as it will with auth on.
    if (!enabled && !LinkAccessTokens.recognizes(bearerOf(request) ?? '')) {
      request.caller = localCaller;
      return;
    }
    // CORS preflights carry no credentials; @fastify/cors answers them.
    if (request.method === 'OPTIONS' || isPublicRoute(request)) return;
    try {
      request.caller = await authenticate(request, credentials);
    } catch (err) {
      throw err instanceof HttpError && err.statusCode === 401 ? await failed(request, err) : err;
    }
  });
}

/** The Authorization header's bearer token. The scheme is case-insensitive (RFC 9110 section 11.1). */
function bearerOf(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  return header ? /^bearer[ \t]+(\S+)[ \t]*$/i.exec(header)?.[1] : undefined;
}

async function authenticate(request: FastifyRequest, { keys, tokens, links }: Credentials): Promise<Caller> {
  const header = request.headers.authorization;
  const token = (request.query as { token?: unknown } | undefined)?.token;
  if (!header && typeof token === 'string' && request.routeOptions.config?.streamToken) {
    const caller = tokens.verify(token, (request.params as { id?: string }).id ?? '');
    // A stream token a link's holder took works only while the link does, within its scope.
    return caller.token?.link ? { ...(await links.callerOfLink(caller.token.link)), token: caller.token } : caller;
  }
  const given = bearerOf(request);
  if (!given) throw new HttpError(401, 'unauthorized', 'Send your API key as "Authorization: Bearer <key>".');
  if (LinkAccessTokens.recognizes(given)) return links.callerOfAccessToken(given);
  const key = keys.find((candidate) => matches(candidate.key, given));
  if (!key) throw new HttpError(401, 'unauthorized', 'That API key is not valid.');
  return { id: key.user, operator: key.operator };
}
