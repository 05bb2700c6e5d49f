import { isGrpcServiceError, ServiceError } from '@temporalio/client';
import { PayloadConverterError, ValueError } from '@temporalio/common';
import type { FastifyError, FastifyInstance } from 'fastify';

/** One problem of a request the API could not accept: where, which rule, what it allows, in words. */
export interface ErrorDetail {
  path: string;
  rule: string;
  allowed?: unknown;
  message: string;
}

/** An error the API answers with as `{error: {code, message, requestId, details?}}`; anything else becomes a 500 without internals. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    /** Sent as `retry-after` (a 429 or 503 the client may retry). */
    readonly retryAfterSeconds?: number,
    /** What exactly was wrong (invalid_decision: every problem, with path, rule and allowed values). */
    readonly details?: ErrorDetail[],
    /** invalid_params: the parameters the skill declares. */
    readonly expectedParameters?: unknown[],
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export const notFound = (what: string) => new HttpError(404, 'not_found', `${what} was not found.`);

export interface ErrorReply {
  status: number;
  body: { error: { code: string; message: string; details?: ErrorDetail[]; expectedParameters?: unknown[] } };
}

/** The status and body for any error: HttpErrors as they are, Fastify's own client errors mapped, the rest hidden. */
export function errorReply(error: unknown): ErrorReply & { unexpected: boolean } {
  const reply = (status: number, code: string, message: string, unexpected = false) => ({ status, body: { error: { code, message } }, unexpected });
  if (error instanceof HttpError) {
    const { body } = reply(error.statusCode, error.code, error.message);
    const extra = { ...(error.details ? { details: error.details } : {}), ...(error.expectedParameters ? { expectedParameters: error.expectedParameters } : {}) };
    return { status: error.statusCode, body: { error: { ...body.error, ...extra } }, unexpected: false };
  }
  const fastifyError = error as Partial<FastifyError> & { code?: unknown };
  if (fastifyError?.validation) return reply(400, 'invalid_request', String(fastifyError.message));
  if (fastifyError?.code === 'FST_ERR_HANDLER_TIMEOUT') return reply(503, 'timeout', 'The request took too long; try again.');
  // A value the payload converter cannot encode came from the request: the client's to fix, not a server fault.
  if (error instanceof PayloadConverterError || error instanceof ValueError) {
    return reply(400, 'invalid_request', 'The request holds a value that cannot be passed on (too deep, too large or not JSON); simplify it.');
  }
  if (isTemporalUnavailable(error)) return reply(503, 'unavailable', 'Temporal is not reachable right now; try again shortly.');
  const status = fastifyError?.statusCode ?? 500;
  if (status >= 400 && status < 500) return reply(status, fastifyCode(fastifyError as FastifyError), String(fastifyError.message));
  return reply(500, 'internal', 'Something went wrong on our side; it has been logged.', true);
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send({ error: { code: 'not_found', message: `No route ${request.method} ${request.url.split('?')[0]}.`, requestId: request.id } });
  });
  app.setErrorHandler((error, request, reply) => {
    const { status, body, unexpected } = errorReply(error);
    // At error level whatever the request-logging setting: the answer tells the caller it was logged.
    if (unexpected || status >= 500) request.log.error({ err: error, status, code: body.error.code }, 'request failed');
    if (error instanceof HttpError && error.retryAfterSeconds !== undefined) void reply.header('retry-after', String(error.retryAfterSeconds));
    return reply.code(status).send({ error: { ...body.error, requestId: request.id } });
  });
}

function fastifyCode(error: FastifyError): string {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'payload_too_large';
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'unsupported_media_type';
    default:
      return error.statusCode === 429 ? 'rate_limited' : 'invalid_request';
  }
}

/** gRPC UNAVAILABLE or DEADLINE_EXCEEDED from the Temporal client: the server is down or overloaded. */
function isTemporalUnavailable(error: unknown): boolean {
  const grpc = error instanceof ServiceError ? error.cause : error;
  return isGrpcServiceError(grpc) && (grpc.code === 14 || grpc.code === 4);
}
