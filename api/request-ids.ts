import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

export const requestIdHeader = 'x-request-id';

/** What a caller may send as its own request id: printable, short, no separators a log reader could trip on. */
const acceptable = /^[A-Za-z0-9._:@-]{1,128}$/;

/** The caller's `x-request-id` when it is acceptable, else a new one; Fastify uses it as `request.id` and logs it. */
export function requestIdOf(header: string | string[] | undefined): string {
  return typeof header === 'string' && acceptable.test(header) ? header : randomUUID();
}

/** Every response, errors and refused requests included, says which request it answers. */
export function installRequestIds(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header(requestIdHeader, request.id);
  });
}
