import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context';
import { HttpError } from '../errors';
import { errorResponses } from '../../core/protocol';

export async function healthRoutes(app: FastifyInstance, { client }: ApiContext): Promise<void> {
  app.get(
    '/healthz',
    {
      config: { public: true },
      schema: {
        operationId: 'checkHealth',
        summary: 'Liveness',
        tags: ['health'],
        security: [],
        response: { 200: Type.Object({ status: Type.Literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );
  app.get(
    '/readyz',
    {
      config: { public: true },
      schema: {
        operationId: 'checkReadiness',
        summary: 'Readiness, including Temporal',
        tags: ['health'],
        security: [],
        response: {
          200: Type.Object({ status: Type.Literal('ready'), temporal: Type.Literal('ok') }),
          ...errorResponses(503),
        },
      },
    },
    async () => {
      try {
        await client.connection.withDeadline(Date.now() + 2_000, () => client.workflowService.getSystemInfo({}));
      } catch {
        throw new HttpError(503, 'not_ready', 'Temporal is not reachable.');
      }
      return { status: 'ready' as const, temporal: 'ok' as const };
    },
  );
}
