import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context';

export async function healthRoutes(app: FastifyInstance, { client }: ApiContext): Promise<void> {
  app.get('/healthz', { schema: { summary: 'Liveness', tags: ['health'] } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { summary: 'Readiness, including Temporal', tags: ['health'] } }, async (_request, reply) => {
    try {
      await client.connection.withDeadline(Date.now() + 2_000, () => client.workflowService.getSystemInfo({}));
      return { status: 'ready', temporal: 'ok' };
    } catch {
      return reply.code(503).send({ error: { code: 'not_ready', message: 'Temporal is not reachable.' } });
    }
  });
}
