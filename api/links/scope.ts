import type { FastifyInstance, FastifyRequest } from 'fastify';
import { linkVerdict, type LinkRequest } from '../../core/links';
import { HttpError } from '../errors';
import { sessionIdOfTurn } from '../turn-view';

/** What the request asks of the link; undefined when its input is malformed (validation then answers 400). */
type Reading = (request: FastifyRequest) => LinkRequest | undefined;

const idOf = (request: FastifyRequest) => (request.params as { id?: string }).id ?? '';
const session: Reading = (request) => ({ kind: 'read', sessionId: idOf(request) });
/** A turn's session is in its id; a checkpoint's name is checked when the answer is (api/links/answers.ts). */
const turn: Reading = (request) => ({ kind: 'read', sessionId: sessionIdOfTurn(idOf(request)) });

/** The routes an answer link may use, and what each asks of it; anything else is refused. */
const linkRoutes: Record<string, Reading> = {
  'GET /v1/sessions/:id': session,
  'POST /v1/sessions/:id/turns': (request) => ({ kind: 'message', sessionId: idOf(request) }),
  'GET /v1/turns/:id': turn,
  'GET /v1/turns/:id/log': turn,
  'GET /v1/turns/:id/events': turn,
  'GET /v1/turns/:id/ws': turn,
  'POST /v1/turns/:id/checkpoints/:checkpointId': turn,
  'POST /v1/stream-tokens': (request) => {
    const turnId = (request.body as { turnId?: unknown } | undefined)?.turnId;
    return typeof turnId === 'string' ? { kind: 'read', sessionId: sessionIdOfTurn(turnId) } : undefined;
  },
  'GET /v1/links/current': () => ({ kind: 'self' }),
};

/** What a request through an answer link asks, read from its route, params and body (not yet validated). */
export function linkRequestOf(request: FastifyRequest): LinkRequest | undefined {
  const method = request.method === 'HEAD' ? 'GET' : request.method;
  const route = `${method} ${request.routeOptions.url ?? request.url.split('?')[0]}`;
  const reading = linkRoutes[route];
  return reading ? reading(request) : { kind: 'other', route };
}

/**
 * Before validation, so a route the link does not allow is a 403 whatever its input: a caller who came through an
 * answer link gets only what the link grants (403 with the reason).
 */
export function installLinkScope(app: FastifyInstance): void {
  app.addHook('preValidation', async (request: FastifyRequest) => {
    const grant = request.caller?.link;
    if (!grant) return;
    const asked = linkRequestOf(request);
    const verdict = asked ? linkVerdict(grant, asked) : { allowed: true as const };
    if (!verdict.allowed) throw new HttpError(403, verdict.code, verdict.message);
  });
}
