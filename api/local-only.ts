import type { FastifyInstance } from 'fastify';
import { isLoopbackHost, type Config } from '../lib/config';
import { checkLocalRequest, localOnlyOf } from '../lib/local-only';
import { HttpError } from './errors';

/**
 * With auth off, every request (WebSocket upgrades included) must be addressed to a loopback name with this server's
 * port, and a browser's must come from the API's own pages or SKILLFLOW_CORS_ORIGINS (lib/local-only.ts): 403 otherwise.
 * With auth on, nothing changes.
 */
export function installLocalOnly(
  app: FastifyInstance,
  config: Pick<Config, 'authEnabled' | 'host' | 'corsOrigins'>,
): void {
  if (config.authEnabled) return;
  const policy = localOnlyOf('the API', 'SKILLFLOW_CORS_ORIGINS', config.corsOrigins, isLoopbackHost(config.host));
  app.addHook('onRequest', async (request) => {
    const verdict = checkLocalRequest(policy, {
      host: request.headers.host,
      origin: request.headers.origin,
      port: request.socket.localPort,
    });
    if (!verdict.allowed) throw new HttpError(403, verdict.code, verdict.message);
  });
}
