import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance } from 'fastify';
import type { ApiKey } from '../lib/config';
import { installAuth } from './auth';
import type { ApiContext } from './context';
import { installErrorHandling } from './errors';
import { checkpointRoutes } from './routes/checkpoints';
import { healthRoutes } from './routes/health';
import { sessionRoutes } from './routes/sessions';
import { turnRoutes } from './routes/turns';
import { ErrorBody } from './schemas';

export interface AppOptions extends ApiContext {
  apiKeys: ApiKey[];
  logger?: boolean;
}

const publicPaths = new Set(['/healthz', '/readyz', '/openapi.json']);

/** Wires the API; `server.ts` only listens, tests use `app.inject`. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: 1024 * 1024,
    requestTimeout: 120_000,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', allErrors: false } },
  });
  app.addSchema(ErrorBody);
  installErrorHandling(app);
  installAuth(app, options.apiKeys, options.config.authEnabled, publicPaths);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'skillflow API', version: '0.1.0', description: 'Start chat turns, follow their events, answer checkpoints.' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  const context: ApiContext = { client: options.client, config: options.config };
  await healthRoutes(app, context);
  await sessionRoutes(app, context);
  await turnRoutes(app, context);
  await checkpointRoutes(app, context);
  return app;
}
