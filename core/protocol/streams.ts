import { Type } from '@sinclair/typebox';
import { Timestamp } from '../schemas/common';
import { TurnId } from './common';

/** What a stream token allows: following the turn, or also answering its checkpoints and cancelling it (WebSocket). */
export const streamTokenScopes = ['read', 'write'] as const;
export type StreamTokenScope = (typeof streamTokenScopes)[number];

const Scope = Type.Union(
  streamTokenScopes.map((scope) => Type.Literal(scope)),
  { description: 'read: follow the turn (the default); write: also answer checkpoints and cancel over the WebSocket' },
);

export const StreamTokenBody = Type.Object(
  { turnId: TurnId, scope: Type.Optional(Scope) },
  { additionalProperties: false },
);

export const StreamToken = Type.Object({
  token: Type.String({ description: 'Pass as ?token= to GET /v1/turns/{id}/events or /ws; valid for this turn only' }),
  expiresAt: Timestamp,
  scope: Scope,
});

export const WsQuery = Type.Object({
  after: Type.Optional(Type.Integer({ minimum: 0, description: 'Send events after this offset' })),
  token: Type.Optional(Type.String({ maxLength: 1024, description: 'A stream token from POST /v1/stream-tokens' })),
});

/** A WebSocket request's id of the client's choice, echoed in its `ack` or `error` frame. */
export type WsRequestId = string | number;

/** Server → client frames of the WebSocket protocol (docs/api.md); `E` is the stream's event type. */
export type WsServerFrame<E> =
  | { type: 'event'; event: E }
  | ({ type: 'ack'; requestId: WsRequestId } & Record<string, unknown>)
  | {
      type: 'error';
      requestId?: WsRequestId;
      status: number;
      error: { code: string; message: string };
      /** Seconds, where the HTTP route sends `retry-after`. */
      retryAfter?: number;
    };

const RequestId = Type.Union([Type.String({ minLength: 1, maxLength: 128 }), Type.Integer()], {
  description: 'Echoed in the ack or error',
});

/** Client → server frames of the WebSocket protocol (docs/api.md). */
export const CheckpointFrame = Type.Object(
  {
    type: Type.Literal('checkpoint'),
    requestId: RequestId,
    checkpointId: Type.String({ pattern: '^cp-[0-9]{1,9}$' }),
  },
  { additionalProperties: true },
);
export const CancelFrame = Type.Object(
  { type: Type.Literal('cancel'), requestId: RequestId },
  { additionalProperties: false },
);
