import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  CreateLinkBody,
  CreatedLink,
  LinkAccess,
  LinkExchangeBody,
  LinkGrantView,
  LinkList,
  LinkParams,
  SessionParams,
  errorResponses,
  type CreateLinkBody as CreateLinkBodyType,
} from '../../core/protocol';
import { searchAttributes } from '../../workflows/search-attributes';
import type { FailedAuthentication } from '../auth';
import type { ApiContext } from '../context';
import { HttpError } from '../errors';
import { describeVisibleSession } from '../sessions';

/** The origin links point to: the one the request was addressed to (behind a listed proxy, as it forwarded it). */
const originOf = (request: FastifyRequest) => `${request.protocol}://${request.host}`;

export async function linkRoutes(
  app: FastifyInstance,
  { client, links }: ApiContext,
  failed: FailedAuthentication,
): Promise<void> {
  /** The session, when the caller owns it or is an operator (404 otherwise), with its owner. */
  const ownedSession = async (request: FastifyRequest, sessionId: string) => {
    const description = await describeVisibleSession(client, request.caller, sessionId);
    return { id: sessionId, owner: description.typedSearchAttributes.get(searchAttributes.user) ?? request.caller.id };
  };

  app.post<{ Params: { id: string }; Body: CreateLinkBodyType }>(
    '/v1/sessions/:id/links',
    {
      schema: {
        operationId: 'createAnswerLink',
        summary: 'Make an answer link: a URL that lets whoever opens it follow the session and answer its checkpoints',
        description:
          "The session's user or an operator. The link works until it expires or is revoked, on the session's turns only: " +
          'reading them, following their events, answering their checkpoints (only those whose names match `checkpoints`, ' +
          "when given), and sending messages only with `messages: true`. Its token is in the URL's fragment and shown only " +
          'here; the API keeps a digest of it. See docs/security.md.',
        tags: ['links'],
        params: SessionParams,
        body: CreateLinkBody,
        response: { 201: { ...CreatedLink, description: 'The link' }, ...errorResponses(400, 401, 403, 404, 429, 503) },
      },
    },
    async (request, reply) => {
      const session = await ownedSession(request, request.params.id);
      const link = await links.create(session, request.caller.id, request.body ?? {}, originOf(request));
      return reply.code(201).header('location', `/v1/sessions/${session.id}/links/${link.id}`).send(link);
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/sessions/:id/links',
    {
      schema: {
        operationId: 'listAnswerLinks',
        summary: "The session's answer links that have not expired (revoked ones too, with revokedAt)",
        tags: ['links'],
        params: SessionParams,
        response: { 200: LinkList, ...errorResponses(401, 403, 404, 429, 503) },
      },
    },
    async (request) => {
      const session = await ownedSession(request, request.params.id);
      return { links: await links.list(session.id) };
    },
  );

  app.delete<{ Params: { id: string; linkId: string } }>(
    '/v1/sessions/:id/links/:linkId',
    {
      schema: {
        operationId: 'revokeAnswerLink',
        summary:
          'Revoke an answer link: from now on it and the access tokens taken with it are refused (401 link_revoked)',
        tags: ['links'],
        params: LinkParams,
        response: { 204: { type: 'null', description: 'Revoked' }, ...errorResponses(401, 403, 404, 429, 503) },
      },
    },
    async (request, reply) => {
      const session = await ownedSession(request, request.params.id);
      await links.revoke(session.id, request.params.linkId);
      return reply.code(204).send();
    },
  );

  app.post<{ Body: { token: string } }>(
    '/v1/links/exchange',
    {
      config: { public: true },
      schema: {
        operationId: 'exchangeAnswerLink',
        summary: "Trade an answer link's token for a short-lived access token (no API key needed)",
        description:
          `The access token is valid for ${links.access.ttlMs / 1000} s (never beyond the link's expiry): send it as ` +
          '"Authorization: Bearer <token>" on the routes the link allows, and exchange the link again when it expires. ' +
          'Failed exchanges count against the per-address limit of failed authentications.',
        tags: ['links'],
        security: [],
        body: LinkExchangeBody,
        response: { 201: LinkAccess, ...errorResponses(400, 401, 429, 503) },
      },
    },
    async (request, reply) => {
      try {
        return reply.code(201).send(await links.exchange(request.body.token));
      } catch (err) {
        if (err instanceof HttpError && err.statusCode === 401) throw await failed(request, err);
        throw err;
      }
    },
  );

  app.get(
    '/v1/links/current',
    {
      schema: {
        operationId: 'getCurrentAnswerLink',
        summary: 'What the answer link of this access token allows, and until when',
        tags: ['links'],
        response: { 200: LinkGrantView, ...errorResponses(401, 404, 429, 503) },
      },
    },
    async (request) => links.describe(request.caller),
  );
}
