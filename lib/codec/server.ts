import http from 'node:http';
import { addressBucketOf } from '../client-addresses';
import { checkLocalRequest, type LocalOnly } from '../local-only';
import type { RateLimiter } from '../rate-limits';
import { checkAccess, routeOf, type CodecAccess } from './access';
import { decodePayloads, type CodecSources, type JsonPayload } from './decode';

export interface CodecServerOptions {
  sources: CodecSources;
  access: CodecAccess;
  /** The namespace whose turns the shared store holds; payloads of another namespace are returned as they came. */
  namespace: string;
  /** Browser origins of the Temporal UI (CORS); `*` allows any. */
  uiOrigins: string[];
  maxBodyBytes: number;
  log: (line: string) => void;
  /** With auth off: the Host and Origin a request must have (lib/local-only.ts); unset, none is checked. */
  localOnly?: LocalOnly;
  /** Failed authentications per client address (SKILLFLOW_ADDRESS_RATE_LIMIT): beyond it a bad key or token gets 429 instead of 401. */
  failedAuth?: RateLimiter;
}

class CodecError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** Headers the Temporal UI and the `temporal` CLI send with a codec request. */
const allowedHeaders = 'Content-Type, X-Namespace, Authorization';

/**
 * Temporal's remote codec protocol (POST `<base>/decode` and `<base>/encode`, `{payloads: [...]}` as protobuf JSON):
 * decode shows what history names by reference (lib/codec/decode.ts), encode is the identity, since skillflow's data
 * converter is Temporal's default. With CORS for the Temporal UI's origins, including its preflight.
 */
export function createCodecServer(options: CodecServerOptions): http.Server {
  const server = http.createServer((request, response) => {
    handle(request, response, options).catch((err: unknown) => {
      const known = err instanceof CodecError;
      if (!known)
        options.log(
          `codec: ${request.method} ${request.url?.split('/ui/')[0]} failed: ${(err as Error).stack ?? String(err)}`,
        );
      const failure = known ? err : new CodecError(500, 'internal_error', 'The codec failed; its log says why.');
      reply(response, failure.status, { error: { code: failure.code, message: failure.message } }, failure.headers);
    });
  });
  server.requestTimeout = 60_000;
  return server;
}

async function handle(
  request: http.IncomingMessage,
  response: http.ServerResponse,
  options: CodecServerOptions,
): Promise<void> {
  const { pathname } = new URL(request.url ?? '/', 'http://codec');
  const origin = request.headers.origin;
  if (options.localOnly) {
    const verdict = checkLocalRequest(options.localOnly, {
      host: request.headers.host,
      origin,
      port: request.socket.localPort,
    });
    if (!verdict.allowed) throw new CodecError(403, verdict.code, verdict.message);
  }
  const corsAllowed = origin !== undefined && (options.uiOrigins.includes('*') || options.uiOrigins.includes(origin));
  if (corsAllowed) {
    response.setHeader('Access-Control-Allow-Origin', origin);
    response.setHeader('Vary', 'Origin');
  }
  if (pathname === '/healthz' && request.method === 'GET') return reply(response, 200, { ok: true });
  const route = routeOf(pathname);
  if (!route.action)
    throw new CodecError(404, 'not_found', 'The codec answers POST <base>/decode and POST <base>/encode.');
  if (request.method === 'OPTIONS') return preflight(request, response, origin, corsAllowed, options.uiOrigins);
  if (request.method !== 'POST')
    throw new CodecError(405, 'method_not_allowed', `Use POST for ${pathname}.`, { Allow: 'POST, OPTIONS' });
  const verdict = checkAccess(options.access, route, request.headers.authorization);
  if (!verdict.allowed && verdict.status === 401)
    await countFailure(options.failedAuth, request.socket.remoteAddress ?? '');
  if (!verdict.allowed)
    throw new CodecError(
      verdict.status,
      verdict.code,
      verdict.message,
      verdict.status === 401 ? { 'WWW-Authenticate': 'Bearer' } : {},
    );
  const payloads = payloadsOf(await readBody(request, options.maxBodyBytes));
  const namespace = request.headers['x-namespace'];
  const ours = namespace === undefined || namespace === '' || namespace === options.namespace;
  if (route.action === 'encode' || !ours) return reply(response, 200, { payloads });
  return reply(response, 200, { payloads: await decodePayloads(payloads, options.sources) });
}

/** Counts a failed authentication against the client's address; beyond the limit, refuses it with 429. */
async function countFailure(limiter: RateLimiter | undefined, address: string): Promise<void> {
  if (!limiter) return;
  const decision = await limiter.take(`auth:${addressBucketOf(address)}`);
  if (decision.allowed) return;
  const seconds = Math.max(1, Math.ceil(decision.resetInMs / 1000));
  const message =
    `Too many failed authentications from your address: at most ${decision.limit} a minute (SKILLFLOW_ADDRESS_RATE_LIMIT); ` +
    `requests with a valid key or UI token are still served. Retry in ${seconds} s.`;
  throw new CodecError(429, 'rate_limited', message, { 'Retry-After': String(seconds) });
}

function preflight(
  request: http.IncomingMessage,
  response: http.ServerResponse,
  origin: string | undefined,
  allowed: boolean,
  origins: string[],
): void {
  if (!allowed) {
    throw new CodecError(
      403,
      'origin_not_allowed',
      `Origin ${origin ?? '(none)'} may not call the codec; allowed: ${origins.join(', ')} (SKILLFLOW_CODEC_UI_ORIGINS).`,
    );
  }
  response.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
  response.setHeader('Access-Control-Allow-Headers', allowedHeaders);
  response.setHeader('Access-Control-Max-Age', '600');
  // A UI served from a public address calling a codec on a private one (Chrome's Private Network Access).
  if (request.headers['access-control-request-private-network'] === 'true')
    response.setHeader('Access-Control-Allow-Private-Network', 'true');
  response.writeHead(204).end();
}

async function readBody(request: http.IncomingMessage, maxBytes: number): Promise<string> {
  const tooLarge = () =>
    new CodecError(
      413,
      'payload_too_large',
      `The request body is over ${maxBytes} bytes (SKILLFLOW_CODEC_MAX_BODY_BYTES).`,
      { Connection: 'close' },
    );
  if (Number(request.headers['content-length'] ?? 0) > maxBytes) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function payloadsOf(body: string): JsonPayload[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new CodecError(
      400,
      'invalid_json',
      'The request body is not JSON: send {"payloads": [...]}, payloads as protobuf JSON.',
    );
  }
  const payloads = (parsed as { payloads?: unknown } | null)?.payloads;
  if (!Array.isArray(payloads) || !payloads.every((p) => typeof p === 'object' && p !== null && !Array.isArray(p))) {
    throw new CodecError(
      400,
      'invalid_payloads',
      'The body must be {"payloads": [...]}, each payload an object with base64 "metadata" values and "data".',
    );
  }
  return payloads as JsonPayload[];
}

function reply(
  response: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
  });
  response.end(text);
}
