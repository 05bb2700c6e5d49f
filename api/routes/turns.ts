import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context';
import {
  CancelAccepted,
  TurnListQuery,
  TurnLog,
  TurnLogQuery,
  TurnPage,
  TurnParams,
  TurnView,
  created,
  errorResponses,
} from '../../core/protocol';
import { cancelTurn } from '../turn-actions';
import { listTurns } from '../turn-list';
import { readTurn, readTurnLog } from '../turn-view';

export async function turnRoutes(app: FastifyInstance, { client, cursors, live }: ApiContext): Promise<void> {
  app.get<{ Querystring: TurnListQuery }>(
    '/v1/turns',
    {
      schema: {
        operationId: 'listTurns',
        summary: "List your turns (operators: everyone's, the inbox with status=waiting)",
        description:
          'From Temporal visibility, which lags a moment behind. Open turns first, newest first, then ended ones.',
        tags: ['turns'],
        querystring: TurnListQuery,
        response: { 200: TurnPage, ...errorResponses(400, 401, 429) },
      },
    },
    async (request) => listTurns(client, cursors, request.caller, request.query),
  );

  app.get<{ Params: { id: string } }>(
    '/v1/turns/:id',
    {
      schema: {
        operationId: 'getTurn',
        summary: 'Read a turn',
        tags: ['turns'],
        params: TurnParams,
        response: { 200: TurnView, ...errorResponses(401, 404, 429) },
      },
    },
    async (request) => readTurn(client, request.caller, request.params.id, live),
  );

  app.get<{ Params: { id: string }; Querystring: { after?: number } }>(
    '/v1/turns/:id/log',
    {
      schema: {
        operationId: 'getTurnLog',
        summary: "The turn's durable events so far, as JSON (the SSE stream follows them live)",
        description:
          "Every event of the turn's log after `after`, in order; live-only events (deltas) are never in it.",
        tags: ['turns'],
        params: TurnParams,
        querystring: TurnLogQuery,
        response: { 200: TurnLog, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) => ({
      events: await readTurnLog(client, request.caller, request.params.id, request.query.after ?? 0),
    }),
  );

  app.post<{ Params: { id: string } }>(
    '/v1/turns/:id/cancel',
    {
      schema: {
        operationId: 'cancelTurn',
        summary: 'Cancel a running or waiting turn',
        description:
          'The turn ends `cancelled` (reason `cancelled`) shortly after; follow its events or read it to see when.',
        tags: ['turns'],
        params: TurnParams,
        response: {
          202: created(CancelAccepted, 'Cancellation requested; Location is the turn'),
          ...errorResponses(401, 404, 409, 429),
        },
      },
    },
    async (request, reply) => {
      await cancelTurn(client, request.caller, request.params.id);
      return reply
        .code(202)
        .header('location', `/v1/turns/${request.params.id}`)
        .send({ id: request.params.id, cancelRequested: true });
    },
  );
}
