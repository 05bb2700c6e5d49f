import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context';
import { CheckpointAccepted, CheckpointAnswer, CheckpointParams, errorResponses } from '../schemas';
import { answerCheckpoint } from '../turn-actions';

export async function checkpointRoutes(app: FastifyInstance, { client, config }: ApiContext): Promise<void> {
  app.post<{ Params: { id: string; checkpointId: string }; Body: CheckpointAnswer }>(
    '/v1/turns/:id/checkpoints/:checkpointId',
    {
      schema: {
        operationId: 'answerCheckpoint',
        summary: 'Answer a pending checkpoint',
        description: 'Only the turn\'s user or an operator may answer; the decision records who did.',
        tags: ['checkpoints'],
        params: CheckpointParams,
        body: CheckpointAnswer,
        response: { 200: CheckpointAccepted, ...errorResponses(400, 401, 404, 409, 429) },
      },
    },
    async (request) => answerCheckpoint(client, request.caller, request.params.id, request.params.checkpointId, request.body, config),
  );
}
