import type { Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Caller } from '../caller';
import type { ApiContext } from '../context';
import { HttpError } from '../errors';
import {
  EventsHeaders,
  EventsQuery,
  StreamToken,
  StreamTokenBody,
  TurnParams,
  WsQuery,
  errorResponses,
} from '../../core/protocol';
import { TurnFollower } from '../streams/follow-turn';
import type { StreamLease } from '../streams/open-streams';
import { SseResponse } from '../streams/sse';
import { runWsSession } from '../streams/ws-session';
import { describeVisibleTurn } from '../turn-view';

/** Streams are capped per user, whichever of the user's keys or stream tokens opened them. */
const streamKeyOf = (caller: Caller) => caller.id;

/** A lease taken for an upgrade that never completes is given back. */
function leaseUntilAttached(lease: StreamLease): StreamLease {
  const timer = setTimeout(() => lease.release(), 10_000);
  timer.unref();
  return {
    attach: (close) => {
      clearTimeout(timer);
      lease.attach(close);
    },
    release: () => {
      clearTimeout(timer);
      lease.release();
    },
  };
}

export async function streamRoutes(app: FastifyInstance, context: ApiContext): Promise<void> {
  const { client, feeds, streams, tokens } = context;
  const leases = new WeakMap<FastifyRequest, StreamLease>();

  app.post<{ Body: Static<typeof StreamTokenBody> }>(
    '/v1/stream-tokens',
    {
      schema: {
        operationId: 'createStreamToken',
        summary: "Get a short-lived token to open a turn's event stream from a browser",
        description:
          `Pass it as ?token= to /v1/turns/{id}/events or /v1/turns/{id}/ws. Valid for one turn, ${tokens.ttlMs / 1000} s. ` +
          'Read-only unless scope is "write", which lets a WebSocket answer checkpoints and cancel; a socket opened with a ' +
          'token closes when the token expires.',
        tags: ['streams'],
        body: StreamTokenBody,
        response: { 201: StreamToken, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request, reply) => {
      if (request.caller.token)
        throw new HttpError(403, 'forbidden', 'A stream token cannot issue stream tokens; use your API key.');
      await describeVisibleTurn(client, request.caller, request.body.turnId);
      return reply.code(201).send(tokens.issue(request.caller, request.body.turnId, request.body.scope));
    },
  );

  app.get<{ Params: { id: string }; Querystring: Static<typeof EventsQuery>; Headers: Static<typeof EventsHeaders> }>(
    '/v1/turns/:id/events',
    {
      exposeHeadRoute: false,
      config: { streamToken: true },
      schema: {
        operationId: 'followTurnEvents',
        summary: "Follow a turn's events (Server-Sent Events)",
        description:
          "Every event of the turn as one SSE message (`data:` is the event's JSON), durable events with their offset as " +
          'the SSE id; Last-Event-ID (or ?after=) resumes without loss or duplicates. Live message.delta events have no ' +
          'id. The stream ends after the terminal event (done, error or cancelled). Auth: the Authorization header, or ' +
          '?token= from POST /v1/stream-tokens.',
        tags: ['streams'],
        params: TurnParams,
        querystring: EventsQuery,
        headers: EventsHeaders,
        response: {
          200: {
            description: 'text/event-stream of TurnEvent',
            content: { 'text/event-stream': { schema: { $ref: 'TurnEvent#' } } },
          },
          ...errorResponses(400, 401, 404, 429),
        },
      },
    },
    async (request, reply) => {
      const turnId = request.params.id;
      await describeVisibleTurn(client, request.caller, turnId);
      const lease = await streams.lease(streamKeyOf(request.caller));
      const lastEventId = request.headers['last-event-id'];
      const after = lastEventId !== undefined ? Number(lastEventId) : (request.query.after ?? 0);
      const sse = new SseResponse(reply);
      const abort = new AbortController();
      reply.raw.on('close', () => abort.abort());
      const endWith = (comment: string) => {
        sse.comment(comment);
        abort.abort();
        sse.end();
      };
      lease.attach(() => endWith('server shutting down'));
      // Its next request would be refused with this code: the client that reconnects is told why.
      const link = request.caller.link;
      const releaseLink = link ? context.linkStreams.hold(link.id, endWith) : () => undefined;
      const follower = new TurnFollower({ feeds, turnId, after, signal: abort.signal, send: (item) => sse.send(item) });
      follower
        .run()
        .catch((err: unknown) => request.log.error({ err }, 'event stream failed'))
        .finally(() => {
          releaseLink();
          lease.release();
          sse.end();
        });
    },
  );

  app.route<{ Params: { id: string }; Querystring: Static<typeof WsQuery> }>({
    method: 'GET',
    url: '/v1/turns/:id/ws',
    config: { streamToken: true },
    schema: {
      operationId: 'openTurnSocket',
      summary: 'Follow a turn and answer it over a WebSocket',
      description:
        'Upgrade to a WebSocket. Server frames: {type:"event", event}, {type:"ack", requestId, ...}, {type:"error", ' +
        'requestId?, status, error:{code, message}}. Client frames: {type:"checkpoint", requestId, checkpointId, action, ' +
        'overrides?, choice?, answer?} and {type:"cancel", requestId}; each is answered with the HTTP routes\' codes. ' +
        'The socket closes (1000) after the terminal event. See docs/api.md.',
      tags: ['streams'],
      params: TurnParams,
      querystring: WsQuery,
      response: {
        101: { description: 'Switching to the WebSocket protocol', type: 'null' },
        ...errorResponses(400, 401, 404, 426, 429),
      },
    },
    preHandler: async (request) => {
      await describeVisibleTurn(client, request.caller, request.params.id);
      // Taken before the upgrade, so the socket beyond a cap is refused with a 429 the client can read.
      if (request.ws) leases.set(request, leaseUntilAttached(await streams.lease(streamKeyOf(request.caller))));
    },
    handler: async () => {
      throw new HttpError(426, 'upgrade_required', 'This route speaks WebSocket: connect with a WebSocket client.');
    },
    wsHandler: (socket, request) => {
      const lease = leases.get(request);
      leases.delete(request);
      if (!lease) {
        socket.close(1011, 'not admitted');
        return;
      }
      runWsSession({
        context,
        caller: request.caller,
        turnId: request.params.id,
        after: request.query.after ?? 0,
        socket,
        lease,
        onUnexpected: (err) => request.log.error({ err }, 'websocket request failed'),
      });
    },
  });
}
