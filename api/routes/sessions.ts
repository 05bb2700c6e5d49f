import { randomBytes } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { sessionWorkflowId } from '../../core/turn';
import { turnSettingsFrom } from '../../lib/turn-settings';
import { workflowTypes } from '../../workflows/definitions';
import { searchAttributes } from '../../workflows/search-attributes';
import type { ApiContext } from '../context';
import { idempotencyHeader, replayedHeader, sessionIdOf } from '../idempotency';
import {
  CreatedSession,
  CreateSessionHeaders,
  SessionListQuery,
  SessionPage,
  SessionParams,
  SessionView,
  created,
  errorResponses,
} from '../../core/protocol';
import { deleteSession, describeVisibleSession, listSessions, readSession } from '../sessions';
import { startTurnRoute } from './start-turn';

export async function sessionRoutes(app: FastifyInstance, context: ApiContext): Promise<void> {
  createSessionRoute(app, context);
  listSessionsRoute(app, context);
  getSessionRoute(app, context);
  deleteSessionRoute(app, context);
  startTurnRoute(app, context);
}

function createSessionRoute(app: FastifyInstance, context: ApiContext): void {
  app.post<{ Headers: Static<typeof CreateSessionHeaders> }>(
    '/v1/sessions',
    {
      schema: {
        operationId: 'createSession',
        summary: 'Create a session',
        description:
          'With an `Idempotency-Key` header, a retry with the same key (by the same user) answers with the session the first ' +
          'request created, `Idempotent-Replayed: true`, instead of creating another.',
        tags: ['sessions'],
        headers: CreateSessionHeaders,
        response: {
          201: created(CreatedSession, 'The session; Location is its URL'),
          ...errorResponses(400, 401, 429),
        },
      },
    },
    async (request, reply) => {
      const key = request.headers[idempotencyHeader];
      const id = key === undefined ? randomBytes(10).toString('hex') : sessionIdOf(request.caller.id, key);
      try {
        await context.quotas.createSession(request.caller.id, id, () => startSession(context, id, request.caller.id));
      } catch (err) {
        // The key's session exists (or existed): the first request's answer stands. Temporal keeps the id taken.
        if (key === undefined || !(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
        void reply.header(replayedHeader, 'true');
      }
      return reply.code(201).header('location', `/v1/sessions/${id}`).send({ id });
    },
  );
}

/** Starts the session's workflow, with the turn settings of this API's configuration. */
function startSession({ client, config }: ApiContext, sessionId: string, userId: string) {
  return client.workflow.start(workflowTypes.session, {
    workflowId: sessionWorkflowId(sessionId),
    taskQueue: config.taskQueue,
    args: [{ sessionId, userId, createdAt: new Date().toISOString(), settings: turnSettingsFrom(config) }],
    typedSearchAttributes: [
      { key: searchAttributes.session, value: sessionId },
      { key: searchAttributes.user, value: userId },
    ],
  });
}

function listSessionsRoute(app: FastifyInstance, { client, cursors }: ApiContext): void {
  app.get<{ Querystring: Static<typeof SessionListQuery> }>(
    '/v1/sessions',
    {
      schema: {
        operationId: 'listSessions',
        summary: "List your open sessions (operators: everyone's), newest first",
        tags: ['sessions'],
        querystring: SessionListQuery,
        response: { 200: SessionPage, ...errorResponses(400, 401, 429) },
      },
    },
    async (request) => listSessions(client, cursors, request.caller, request.query),
  );
}

function getSessionRoute(app: FastifyInstance, { client, live }: ApiContext): void {
  app.get<{ Params: { id: string } }>(
    '/v1/sessions/:id',
    {
      schema: {
        operationId: 'getSession',
        summary: 'Read a session with its turns',
        tags: ['sessions'],
        params: SessionParams,
        response: { 200: SessionView, ...errorResponses(401, 404, 429) },
      },
    },
    async (request) => readSession(client, request.caller, request.params.id, live),
  );
}

function deleteSessionRoute(app: FastifyInstance, { client, quotas }: ApiContext): void {
  app.delete<{ Params: { id: string } }>(
    '/v1/sessions/:id',
    {
      schema: {
        operationId: 'deleteSession',
        summary: 'Delete a session: cancels its running turn and removes the session and its turns from Temporal',
        description:
          'Afterwards the session and its turns read as 404 at once; listings may show the turns for a few seconds more.',
        tags: ['sessions'],
        params: SessionParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(401, 404, 429) },
      },
    },
    async (request, reply) => {
      const description = await describeVisibleSession(client, request.caller, request.params.id);
      const owner = description.typedSearchAttributes.get(searchAttributes.user);
      if (owner) await quotas.rememberSpending(owner, request.params.id);
      await deleteSession(client, request.caller, request.params.id);
      if (owner) await quotas.sessionDeleted(owner, request.params.id);
      return reply.code(204).send();
    },
  );
}
