import { isGrpcServiceError, ServiceError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { PayloadConverterError, ValueError } from '@temporalio/common';
import { google } from '@temporalio/proto';
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
  /** Sent as `retry-after` (HTTP) or `retryAfter` (WebSocket error frames). */
  retryAfterSeconds?: number;
}

/** The status and body for any error: HttpErrors as they are, Fastify's own client errors mapped, the rest hidden. */
export function errorReply(given: unknown): ErrorReply & { unexpected: boolean } {
  const reply = (status: number, code: string, message: string, unexpected = false) => ({
    status,
    body: { error: { code, message } },
    unexpected,
  });
  const error = transientTemporalError(given) ?? given;
  if (error instanceof HttpError) {
    const { body } = reply(error.statusCode, error.code, error.message);
    const extra = {
      ...(error.details ? { details: error.details } : {}),
      ...(error.expectedParameters ? { expectedParameters: error.expectedParameters } : {}),
    };
    const retry = error.retryAfterSeconds !== undefined ? { retryAfterSeconds: error.retryAfterSeconds } : {};
    return { status: error.statusCode, body: { error: { ...body.error, ...extra } }, ...retry, unexpected: false };
  }
  const fastifyError = error as Partial<FastifyError> & { code?: unknown };
  if (fastifyError?.validation) return reply(400, 'invalid_request', String(fastifyError.message));
  if (fastifyError?.code === 'FST_ERR_HANDLER_TIMEOUT')
    return reply(503, 'timeout', 'The request took too long; try again.');
  // A value the payload converter cannot encode came from the request: the client's to fix, not a server fault.
  if (error instanceof PayloadConverterError || error instanceof ValueError) {
    return reply(
      400,
      'invalid_request',
      'The request holds a value that cannot be passed on (too deep, too large or not JSON); simplify it.',
    );
  }
  const status = fastifyError?.statusCode ?? 500;
  if (status >= 400 && status < 500)
    return reply(status, fastifyCode(fastifyError as FastifyError), String(fastifyError.message));
  return reply(500, 'internal', 'Something went wrong on our side; it has been logged.', true);
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send({
      error: {
        code: 'not_found',
        message: `No route ${request.method} ${request.url.split('?')[0]}.`,
        requestId: request.id,
      },
    });
  });
  app.setErrorHandler((error, request, reply) => {
    const { status, body, unexpected, retryAfterSeconds } = errorReply(error);
    // At error level whatever the request-logging setting: the answer tells the caller it was logged.
    if (unexpected || status >= 500) request.log.error({ err: error, status, code: body.error.code }, 'request failed');
    if (retryAfterSeconds !== undefined) void reply.header('retry-after', String(retryAfterSeconds));
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

/**
 * Temporal errors that say "not now" rather than "no": the request did nothing Temporal kept (or, for a timed-out
 * update, may have; see docs/api.md "Retrying safely"), and the same request can succeed later. Answered 503 with
 * `retry-after` instead of 500 `internal`.
 */

/** A workflow task is retried at the latest after Temporal's workflow task timeout (10 s) or its retry backoff. */
export const busyRetryAfterSeconds = 10;
export const unavailableRetryAfterSeconds = 5;

const grpcStatus = { deadlineExceeded: 4, resourceExhausted: 8, failedPrecondition: 9, unavailable: 14 } as const;
const workflowNotReadyType = 'temporal.api.errordetails.v1.WorkflowNotReadyFailure';

/** The 503 for a Temporal error a client should retry, or undefined for any other error. */
export function transientTemporalError(error: unknown): HttpError | undefined {
  if (error instanceof WorkflowUpdateRPCTimeoutOrCancelledError) {
    return new HttpError(
      503,
      'timeout',
      'Temporal did not confirm the request in time; retry it with the same Idempotency-Key.',
      unavailableRetryAfterSeconds,
    );
  }
  const grpc = error instanceof ServiceError ? error.cause : error;
  if (!isGrpcServiceError(grpc)) return undefined;
  if (grpc.code === grpcStatus.failedPrecondition && hasDetail(grpc, workflowNotReadyType)) {
    // Temporal refuses updates (a turn start, a checkpoint answer) while the workflow's task keeps failing or timing
    // out, as on an overloaded worker; the update was not admitted, so nothing was applied.
    return new HttpError(
      503,
      'busy',
      'The turn or session cannot take this request right now: its workflow is catching up after a failed or timed-out task. Nothing was applied; try again shortly.',
      busyRetryAfterSeconds,
    );
  }
  if (
    grpc.code === grpcStatus.unavailable ||
    grpc.code === grpcStatus.deadlineExceeded ||
    grpc.code === grpcStatus.resourceExhausted
  ) {
    return new HttpError(
      503,
      'unavailable',
      'Temporal is not reachable or overloaded right now; try again shortly.',
      unavailableRetryAfterSeconds,
    );
  }
  return undefined;
}

function hasDetail(grpc: { metadata?: { get(key: string): unknown[] } }, type: string): boolean {
  const encoded = grpc.metadata?.get('grpc-status-details-bin')?.[0];
  if (!(encoded instanceof Uint8Array)) return false;
  try {
    return (google.rpc.Status.decode(encoded).details ?? []).some(
      (detail) => detail.type_url?.endsWith(`/${type}`) || detail.type_url === type,
    );
  } catch {
    return false;
  }
}
