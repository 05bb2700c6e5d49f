import { Type, type TSchema } from '@sinclair/typebox';

import { Nullable } from '../schemas/common';
import { FieldSpec } from '../schemas/skill-runs';

/** One definition per shape: request validation, TypeScript types and the OpenAPI document all come from here. */

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: 'Stable, machine-readable: not_found, unauthorized, rate_limited, ...' }),
      message: Type.String({ description: 'For humans; says what to change when the caller can fix it.' }),
      requestId: Type.String({
        description: "The request's id, as in the x-request-id header: quote it when reporting a problem",
      }),
      details: Type.Optional(
        Type.Array(
          Type.Object({
            path: Type.String({ description: 'Where in the request, e.g. overrides.question_count' }),
            rule: Type.String({
              description: 'The rule broken: type, enum, minimum, maximum, required, additionalProperties, ...',
            }),
            allowed: Type.Optional(
              Type.Unknown({
                description: 'What the rule allows: a type, the enum values, {minimum, maximum}, the names allowed',
              }),
            ),
            message: Type.String(),
          }),
          { description: 'invalid_decision, invalid_params: every problem found, one per entry' },
        ),
      ),
      expectedParameters: Type.Optional(
        Type.Array(FieldSpec, {
          description: 'invalid_params: the parameters the skill declares (GET /v1/skills/:name has them too)',
        }),
      ),
    }),
  },
  { $id: 'Error', description: 'Every error the API answers with has this shape.' },
);

export const errorResponses = (...codes: number[]) =>
  Object.fromEntries(codes.map((code) => [code, { $ref: 'Error#' }]));

/** A 201 or 202 response that names the new resource's URL in `Location`. */
export const created = <T extends TSchema>(schema: T, description: string) => ({
  ...(schema.$id ? { $ref: `${schema.$id}#` } : schema),
  description,
  headers: { location: { type: 'string', description: 'The URL of what was created or started' } },
});

export const SessionId = Type.String({ pattern: '^[a-z0-9]{8,40}$', description: 'Session id' });
export const TurnId = Type.String({
  pattern: '^turn-[a-z0-9]{8,40}-[0-9]{1,9}$',
  description: 'Turn id (also its workflow id)',
});
export const UserId = Type.String({ pattern: '^[A-Za-z0-9._@-]{1,64}$', description: 'User id (from the API key)' });

export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Items per page' })),
  cursor: Type.Optional(
    Type.String({ maxLength: 4096, pattern: '^[A-Za-z0-9_.-]*$', description: 'nextCursor of the previous page' }),
  ),
};

export const NextCursor = Nullable(
  Type.String({ description: 'Pass as cursor for the next page; null on the last page' }),
);

/** `?token=`: a stream token, for clients that cannot send headers (EventSource, browser WebSocket). */
export const StreamTokenQuery = Type.Optional(
  Type.String({ maxLength: 1024, description: 'A stream token from POST /v1/stream-tokens' }),
);

/** `Idempotency-Key` on the POSTs that create something (api/idempotency.ts): a retry with it gets the first result. */
export const IdempotencyHeaders = (what: string) =>
  Type.Object({
    'idempotency-key': Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        pattern: '^[\\x21-\\x7E]+$',
        description: `Makes retries safe: the same key gives ${what}`,
      }),
    ),
  });
