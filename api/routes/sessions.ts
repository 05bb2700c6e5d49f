import { randomBytes } from 'node:crypto';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import type { FastifyInstance } from 'fastify';
import { sessionWorkflowId } from '../../core/turn';
import { turnSettingsFrom } from '../../lib/turn-settings';
import { startTurnUpdate } from '../../workflows/definitions';
import { searchAttributes } from '../../workflows/search-attributes';
import { SessionErrorType } from '../../workflows/session-types';
import type { Caller } from '../auth';
import type { ApiContext } from '../context';
import { HttpError, notFound } from '../errors';
import { CreatedSession, SessionParams, StartTurnBody, StartedTurn, errorResponses } from '../schemas';
import { canSee } from '../turn-view';

export async function sessionRoutes(app: FastifyInstance, { client, config }: ApiContext): Promise<void> {
  app.post(
    '/v1/sessions',
    { schema: { summary: 'Create a session', tags: ['sessions'], response: { 201: CreatedSession, ...errorResponses(401) } } },
    async (request, reply) => {
      const id = randomBytes(10).toString('hex');
      await client.workflow.start('sessionWorkflow', {
        workflowId: sessionWorkflowId(id),
        taskQueue: config.taskQueue,
        args: [{ sessionId: id, userId: request.caller.id, createdAt: new Date().toISOString(), settings: turnSettingsFrom(config) }],
        typedSearchAttributes: [
          { key: searchAttributes.session, value: id },
          { key: searchAttributes.user, value: request.caller.id },
        ],
      });
      return reply.code(201).send({ id });
    },
  );

  app.post<{ Params: { id: string }; Body: StartTurnBody }>(
    '/v1/sessions/:id/turns',
    {
      schema: {
        summary: 'Send a message: starts a turn',
        tags: ['turns'],
        params: SessionParams,
        body: StartTurnBody,
        response: { 202: StartedTurn, ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request, reply) => {
      const sessionId = request.params.id;
      if (request.body.message.length > config.maxMessageChars) {
        throw new HttpError(400, 'message_too_long', `message is ${request.body.message.length} characters; the limit is ${config.maxMessageChars}.`);
      }
      await assertSessionVisible(client, request.caller, sessionId);
      try {
        const started = await client.workflow
          .getHandle(sessionWorkflowId(sessionId))
          .executeUpdate(startTurnUpdate, { args: [request.body] });
        return reply.code(202).send({ id: started.turnId, sessionId, status: 'running' });
      } catch (err) {
        throw mapSessionError(err, sessionId);
      }
    },
  );
}

export async function assertSessionVisible(client: ApiContext['client'], caller: Caller, sessionId: string): Promise<void> {
  try {
    const description = await client.workflow.getHandle(sessionWorkflowId(sessionId)).describe();
    if (description.status.name !== 'RUNNING' || !canSee(caller, description.typedSearchAttributes.get(searchAttributes.user))) {
      throw notFound(`Session ${sessionId}`);
    }
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw notFound(`Session ${sessionId}`);
    throw err;
  }
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
