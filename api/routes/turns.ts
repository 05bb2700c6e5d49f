import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context';
import { TurnParams, TurnView, errorResponses } from '../schemas';
import { readTurn } from '../turn-view';

export async function turnRoutes(app: FastifyInstance, { client }: ApiContext): Promise<void> {
  app.get<{ Params: { id: string } }>(
    '/v1/turns/:id',
    { schema: { summary: 'Read a turn', tags: ['turns'], params: TurnParams, response: { 200: TurnView, ...errorResponses(401, 404) } } },
    async (request) => readTurn(client, request.caller, request.params.id),
  );
}
