import { randomBytes } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { checkParams, type SkillManifest } from '../../core/skills';
import { sessionWorkflowId } from '../../core/turn';
import { turnSettingsFrom } from '../../lib/turn-settings';
import { startTurnUpdate, workflowTypes } from '../../workflows/definitions';
import { searchAttributes } from '../../workflows/search-attributes';
import { SessionErrorType } from '../../workflows/session-types';
import type { ApiContext } from '../context';
import { HttpError, notFound } from '../errors';
import {
  idempotencyHeader,
  keyDigest,
  keyReused,
  newAttempt,
  replayedHeader,
  requestDigest,
  sessionIdOf,
} from '../idempotency';
import { checkedMessage, checkedParams } from '../input-limits';
import {
  CreatedSession,
  CreateSessionHeaders,
  SessionListQuery,
  SessionPage,
  SessionParams,
  SessionView,
  StartTurnBody,
  StartTurnHeaders,
  StartTurnQuery,
  StartedTurn,
  TurnView,
  created,
  errorResponses,
} from '../../core/protocol';
import { deleteSession, describeVisibleSession, listSessions, readSession } from '../sessions';
import { waitForTurnToSettle } from '../turn-wait';
import { startBeyondWaitMs } from '../deadlines';

export async function sessionRoutes(
  app: FastifyInstance,
  { client, config, skills, cursors, closing, quotas, live }: ApiContext,
): Promise<void> {
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
        await quotas.createSession(request.caller.id, id, () =>
          client.workflow.start(workflowTypes.session, {
            workflowId: sessionWorkflowId(id),
            taskQueue: config.taskQueue,
            args: [
              {
                sessionId: id,
                userId: request.caller.id,
                createdAt: new Date().toISOString(),
                settings: turnSettingsFrom(config),
              },
            ],
            typedSearchAttributes: [
              { key: searchAttributes.session, value: id },
              { key: searchAttributes.user, value: request.caller.id },
            ],
          }),
        );
      } catch (err) {
        // The key's session exists (or existed): the first request's answer stands. Temporal keeps the id taken.
        if (key === undefined || !(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
        void reply.header(replayedHeader, 'true');
      }
      return reply.code(201).header('location', `/v1/sessions/${id}`).send({ id });
    },
  );

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

  app.post<{
    Params: { id: string };
    Body: StartTurnBody;
    Querystring: Static<typeof StartTurnQuery>;
    Headers: Static<typeof StartTurnHeaders>;
  }>(
    '/v1/sessions/:id/turns',
    {
      handlerTimeout: Math.max(config.requestTimeoutMs, config.waitTimeoutMs + startBeyondWaitMs),
      schema: {
        operationId: 'startTurn',
        summary: 'Send a message: starts a turn',
        description:
          'Answers 202 at once, or with `?wait=true` holds the request until the turn ends or waits at a checkpoint and ' +
          `answers 200 with the turn (202 after ${config.waitTimeoutMs} ms). 409 while another turn of the session runs or waits. ` +
          'With an `Idempotency-Key` header, a retry with the same key and body (by the same user) answers with the turn the first ' +
          'request started, `Idempotent-Replayed: true`, instead of starting another (also after the session continued as new); ' +
          'the same key with another body is 422 `idempotency_key_reused`.',
        tags: ['turns'],
        params: SessionParams,
        headers: StartTurnHeaders,
        querystring: StartTurnQuery,
        body: StartTurnBody,
        response: {
          200: TurnView,
          202: created(StartedTurn, 'The turn started; Location is its URL'),
          ...errorResponses(400, 401, 404, 409, 413, 422, 429, 503),
        },
      },
    },
    async (request, reply) => {
      const sessionId = request.params.id;
      const { skill } = request.body;
      const message = checkedMessage(request.body.message, config);
      const params = request.body.params === undefined ? undefined : checkedParams(request.body.params);
      if (params !== undefined && !skill)
        throw new HttpError(400, 'invalid_request', 'params go with a skill: name the skill they are for.');
      await describeVisibleSession(client, request.caller, sessionId);
      const tokenBudget = await quotas.checkTokenBudget(request.caller.id);
      if (skill && skills) {
        const catalog = await skills.catalog();
        const manifest = catalog.skills.find((entry) => entry.name === skill);
        if (!manifest)
          throw new HttpError(400, 'unknown_skill', `There is no enabled skill "${skill}"; GET /v1/skills lists them.`);
        if (params !== undefined) checkSkillParams(manifest, params);
      }
      const key = request.headers[idempotencyHeader];
      const origin =
        key === undefined
          ? undefined
          : {
              key: keyDigest(request.caller.id, key),
              requestDigest: requestDigest(request.body),
              attempt: newAttempt(),
            };
      let turnId: string;
      try {
        const started = await client.workflow.getHandle(sessionWorkflowId(sessionId)).executeUpdate(startTurnUpdate, {
          args: [
            {
              ...request.body,
              message,
              ...(params !== undefined ? { params } : {}),
              requestId: request.id,
              ...(origin ? { idempotency: origin } : {}),
              ...(tokenBudget !== undefined ? { tokenBudget } : {}),
            },
          ],
        });
        turnId = started.turnId;
        if (origin && started.idempotency && started.idempotency.requestDigest !== origin.requestDigest)
          throw keyReused();
        if (origin && started.idempotency && started.idempotency.attempt !== origin.attempt)
          void reply.header(replayedHeader, 'true');
      } catch (err) {
        throw mapSessionError(err, sessionId);
      }
      if (request.query.wait) {
        const abort = new AbortController();
        reply.raw.on('close', () => abort.abort());
        const settled = await waitForTurnToSettle(
          client,
          request.caller,
          turnId,
          config.waitTimeoutMs,
          AbortSignal.any([abort.signal, closing]),
          live,
        );
        if (settled) return reply.code(200).send(settled);
      }
      return reply
        .code(202)
        .header('location', `/v1/turns/${turnId}`)
        .send({ id: turnId, sessionId, status: 'running' });
    },
  );
}

/** A typed start's params against the skill's declared parameters: 400 with every problem and the expected parameters. */
function checkSkillParams(manifest: SkillManifest, params: Record<string, unknown>): void {
  const checked = checkParams(manifest, params);
  if (checked.ok) return;
  const listed = checked.problems.map((problem) => problem.message).join('; ');
  throw new HttpError(
    400,
    'invalid_params',
    `The params are not valid for skill ${manifest.name}: ${listed}.`,
    undefined,
    checked.problems,
    manifest.parameters,
  );
}

function mapSessionError(err: unknown, sessionId: string): unknown {
  if (err instanceof WorkflowNotFoundError) return notFound(`Session ${sessionId}`);
  if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure) {
    const { type, message } = err.cause;
    if (type === SessionErrorType.turnInProgress) return new HttpError(409, 'turn_in_progress', message);
    if (type === SessionErrorType.sessionClosed) return notFound(`Session ${sessionId}`);
    if (type === 'InvalidRequest') return new HttpError(400, 'invalid_request', message);
  }
  return err;
}
