import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context';
import { idempotencyHeader } from '../idempotency';
import {
  AnswerHeaders,
  CheckpointAccepted,
  CheckpointAnswer,
  CheckpointParams,
  errorResponses,
} from '../../core/protocol';
import { answerCheckpoint } from '../turn-actions';

export async function checkpointRoutes(app: FastifyInstance, { client, config, live }: ApiContext): Promise<void> {
  app.post<{
    Params: { id: string; checkpointId: string };
    Body: CheckpointAnswer;
    Headers: Static<typeof AnswerHeaders>;
  }>(
    '/v1/turns/:id/checkpoints/:checkpointId',
    {
      schema: {
        operationId: 'answerCheckpoint',
        summary: 'Answer a pending checkpoint',
        description:
          "Only the turn's user or an operator may answer; the decision records who did. With an `Idempotency-Key` header, a " +
          'retry of an answer the turn took (same key, same body, same user) answers 200 with it again, also after the turn went ' +
          'on or ended, instead of 409.',
        tags: ['checkpoints'],
        params: CheckpointParams,
        headers: AnswerHeaders,
        body: CheckpointAnswer,
        response: { 200: CheckpointAccepted, ...errorResponses(400, 401, 404, 409, 429, 503) },
      },
    },
    async (request) =>
      answerCheckpoint(
        client,
        request.caller,
        request.params.id,
        request.params.checkpointId,
        request.body,
        config,
        request.headers[idempotencyHeader],
        live,
      ),
  );
}
