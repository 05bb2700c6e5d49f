import { AnthropicError, APIConnectionError, APIConnectionTimeoutError, APIError } from '@anthropic-ai/sdk';
import { ApplicationFailure, TemporalFailure } from '@temporalio/common';
import { ModelErrorType } from '../core/model';

type ModelErrorTypeName = (typeof ModelErrorType)[keyof typeof ModelErrorType];

/** Plain data attached to every model failure as `details[0]`. */
export interface ModelErrorDetails {
  status: number | null;
  errorType: string | null;
  requestId: string | null;
}

export const maxRetryAfterMs = 5 * 60_000;
const maxMessageLength = 1_000;

/**
 * Turns anything the model call threw into an ApplicationFailure whose `type` is a `ModelErrorType`, so the
 * workflow's retry policy decides what happens next. Temporal failures (cancellation included) pass through as is.
 */
export function classifyModelError(err: unknown): ApplicationFailure | unknown {
  if (err instanceof TemporalFailure) return err;
  if (err instanceof APIConnectionTimeoutError) {
    return failure(ModelErrorType.transient, 'Anthropic API request timed out', noDetails, err);
  }
  if (err instanceof APIConnectionError) {
    const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
    return failure(ModelErrorType.transient, `Anthropic API connection error${cause}`, noDetails, err);
  }
  if (err instanceof APIError) return fromApiError(err);
  if (err instanceof AnthropicError) {
    return failure(ModelErrorType.transient, `Anthropic API stream failed: ${err.message}`, noDetails, err);
  }
  return err;
}

/** A failure raised by this activity itself, with the same shape as the ones classified from the API. */
export function modelFailure(type: ModelErrorTypeName, message: string): ApplicationFailure {
  return failure(type, message, noDetails);
}

const noDetails: ModelErrorDetails = { status: null, errorType: null, requestId: null };

function fromApiError(err: APIError): ApplicationFailure {
  const status = typeof err.status === 'number' ? err.status : null;
  const errorType = err.type ?? null;
  const type = status !== null ? typeForStatus(status) : typeForErrorType(errorType);
  const where = status !== null ? String(status) : 'stream error';
  const message = `Anthropic API ${where} ${errorType ?? 'unknown_error'}: ${err.apiMessage ?? err.message}`;
  const details: ModelErrorDetails = { status, errorType, requestId: err.requestID ?? null };
  const retryAfterMs = type === ModelErrorType.transient ? retryAfterOf(err.headers) : undefined;
  return failure(type, message, details, err, retryAfterMs);
}

function typeForStatus(status: number): ModelErrorTypeName {
  if (status === 401 || status === 403) return ModelErrorType.authentication;
  if (status === 404) return ModelErrorType.notFound;
  if (status === 408 || status === 409 || status === 429 || status >= 500) return ModelErrorType.transient;
  if (status >= 400) return ModelErrorType.invalidRequest;
  return ModelErrorType.transient;
}

/** For errors sent inside an SSE stream after a 200, which carry an error type but no status. */
function typeForErrorType(errorType: string | null): ModelErrorTypeName {
  switch (errorType) {
    case 'invalid_request_error':
    case 'request_too_large':
    case 'billing_error':
      return ModelErrorType.invalidRequest;
    case 'authentication_error':
    case 'permission_error':
      return ModelErrorType.authentication;
    case 'not_found_error':
      return ModelErrorType.notFound;
    default:
      return ModelErrorType.transient;
  }
}

/** Reads `retry-after-ms`, then `retry-after` (seconds or an HTTP date), as the SDK's own retry logic does. */
export function retryAfterOf(headers: Headers | undefined, now = Date.now()): number | undefined {
  const millis = parseFloat(headers?.get('retry-after-ms') ?? '');
  let delay = Number.isNaN(millis) ? undefined : millis;
  const retryAfter = headers?.get('retry-after');
  if (delay === undefined && retryAfter) {
    const seconds = Number(retryAfter);
    delay = Number.isNaN(seconds) ? Date.parse(retryAfter) - now : seconds * 1000;
  }
  if (delay === undefined || Number.isNaN(delay) || delay <= 0) return undefined;
  return Math.min(Math.round(delay), maxRetryAfterMs);
}

function failure(
  type: ModelErrorTypeName,
  message: string,
  details: ModelErrorDetails,
  cause?: Error,
  nextRetryDelay?: number,
): ApplicationFailure {
  return ApplicationFailure.create({
    type,
    message: message.length > maxMessageLength ? `${message.slice(0, maxMessageLength)}…` : message,
    nonRetryable: type !== ModelErrorType.transient,
    details: [details],
    cause,
    nextRetryDelay,
  });
}
