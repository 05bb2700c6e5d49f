import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import type { FastifyInstance } from 'fastify';
import { CheckpointErrorType } from '../../core/checkpoints';
import { answerCheckpointUpdate } from '../../workflows/definitions';
import type { ApiContext } from '../context';
import { HttpError } from '../errors';
import { CheckpointAnswer, CheckpointParams, CheckpointAccepted, errorResponses } from '../schemas';
import { readTurn } from '../turn-view';

export async function checkpointRoutes(app: FastifyInstance, { client }: ApiContext): Promise<void> {
  app.post<{ Params: { id: string; checkpointId: string }; Body: CheckpointAnswer }>(
    '/v1/turns/:id/checkpoints/:checkpointId',
    {
      schema: {
        summary: 'Answer a pending checkpoint',
        tags: ['checkpoints'],
        params: CheckpointParams,
        body: CheckpointAnswer,
        response: { 200: CheckpointAccepted, ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request) => {
      const { id, checkpointId } = request.params;
      const turn = await readTurn(client, request.caller, id);
      if (turn.status === 'completed' || turn.status === 'failed' || turn.status === 'cancelled') {
        throw new HttpError(409, 'checkpoint_not_pending', `Turn ${id} has ended (${turn.status}); its checkpoints can no longer be answered.`);
      }
      try {
        const accepted = await client.workflow
          .getHandle(id)
          .executeUpdate(answerCheckpointUpdate, { args: [{ ...request.body, checkpointId, by: request.caller.id }] });
        return { ...accepted, by: request.caller.id };
      } catch (err) {
        throw mapCheckpointError(err, id);
      }
    },
  );
}

function mapCheckpointError(err: unknown, turnId: string): unknown {
  if (err instanceof WorkflowNotFoundError) {
    return new HttpError(409, 'checkpoint_not_pending', `Turn ${turnId} has ended; its checkpoints can no longer be answered.`);
  }
  if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure) {
    const { type, message } = err.cause;
    if (type === CheckpointErrorType.notFound) return new HttpError(404, 'not_found', message);
    if (type === CheckpointErrorType.notPending) return new HttpError(409, 'checkpoint_not_pending', message);
    if (type === CheckpointErrorType.invalidDecision) return new HttpError(400, 'invalid_decision', message);
  }
  return err;
}
