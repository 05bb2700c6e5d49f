import { Type } from '@sinclair/typebox';

/** One definition per shape: request validation, TypeScript types and the OpenAPI document all come from here. */

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: 'Stable, machine-readable: not_found, unauthorized, rate_limited, ...' }),
      message: Type.String({ description: 'For humans; says what to change when the caller can fix it.' }),
    }),
  },
  { $id: 'Error', description: 'Every error the API answers with has this shape.' },
);

export const errorResponses = (...codes: number[]) => Object.fromEntries(codes.map((code) => [code, { $ref: 'Error#' }]));

export const SessionId = Type.String({ pattern: '^[a-z0-9]{8,40}$', description: 'Session id' });
export const TurnId = Type.String({ pattern: '^turn-[a-z0-9]{8,40}-[0-9]{1,9}$', description: 'Turn id (also its workflow id)' });
export const SkillName = Type.String({ pattern: '^[a-z0-9](?:[a-z0-9]|-(?!-)){0,62}[a-z0-9]?$', maxLength: 64, description: 'Skill name' });
export const UserId = Type.String({ pattern: '^[A-Za-z0-9._@-]{1,64}$', description: 'User id (from the API key)' });
export const Timestamp = Type.String({ format: 'date-time' });
export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Items per page' })),
  cursor: Type.Optional(Type.String({ maxLength: 4096, pattern: '^[A-Za-z0-9_.-]*$', description: 'nextCursor of the previous page' })),
};

export const NextCursor = Nullable(Type.String({ description: 'Pass as cursor for the next page; null on the last page' }));

/** `?token=`: a stream token, for clients that cannot send headers (EventSource, browser WebSocket). */
export const StreamTokenQuery = Type.Optional(Type.String({ maxLength: 1024, description: 'A stream token from POST /v1/stream-tokens' }));
