import type { WebSocket } from 'ws';
import type { Caller } from '../caller';
import type { ApiContext } from '../context';
import { errorReply, HttpError } from '../errors';
import { rateLimited, userBucket } from '../limits';
import { answerCheckpoint, cancelTurn } from '../turn-actions';
import { TurnFollower } from './follow-turn';
import { maxBufferedStreamBytes, type StreamLease } from './open-streams';
import { parseClientFrame, type ClientFrame, type ServerFrame } from './ws-frames';

export interface WsSessionOptions {
  context: ApiContext;
  caller: Caller;
  turnId: string;
  after: number;
  socket: WebSocket;
  /** The socket's place within the stream caps, given back when it closes. */
  lease: StreamLease;
  onUnexpected: (err: unknown) => void;
}

/** Requests one socket may have in flight; more are refused with 429 rather than queued. */
export const maxPendingRequests = 8;

/**
 * One client on a turn's WebSocket: the turn's events as `event` frames (like SSE), and checkpoint decisions and
 * cancels from the client, each answered by an `ack` or an `error` with the HTTP route's status and code. Every frame
 * the client sends counts against its user's rate limit, like a request. A socket opened with a stream token may
 * answer and cancel only with a `write` token, and closes (1008) when the token expires. The socket closes (1000)
 * after the terminal event and any requests still being answered.
 */
export function runWsSession({ context, caller, turnId, after, socket, lease, onUnexpected }: WsSessionOptions): void {
  const abort = new AbortController();
  let pending = 0;
  let turnOver = false;
  const send = (frame: ServerFrame) => {
    if (socket.readyState !== socket.OPEN) return;
    if (socket.bufferedAmount > maxBufferedStreamBytes) {
      socket.close(1008, 'client too slow');
      return;
    }
    socket.send(JSON.stringify(frame));
  };
  const sendError = (error: HttpError, requestId?: string | number) =>
    send({
      type: 'error',
      ...(requestId !== undefined ? { requestId } : {}),
      status: error.statusCode,
      error: { code: error.code, message: error.message },
      ...(error.retryAfterSeconds !== undefined ? { retryAfter: error.retryAfterSeconds } : {}),
    });
  const closeIfDone = () => {
    if (turnOver && pending === 0 && socket.readyState === socket.OPEN) socket.close(1000, 'turn ended');
  };
  lease.attach(() => socket.close(1001, 'server shutting down'));
  const expiry = caller.token
    ? setTimeout(() => socket.close(1008, 'stream token expired'), Math.max(0, caller.token.expiresAt - Date.now()))
    : undefined;
  // A link that stops working (revoked on any API process, expired) closes the socket with the code of its refusal.
  const releaseLink = caller.link
    ? context.linkStreams.hold(caller.link.id, (code) => socket.close(1008, code))
    : () => undefined;
  socket.on('close', () => {
    abort.abort();
    clearTimeout(expiry);
    releaseLink();
    lease.release();
  });

  const follower = new TurnFollower({
    feeds: context.feeds,
    turnId,
    after,
    signal: abort.signal,
    send: (event) => send({ type: 'event', event }),
  });
  follower.run().then(
    (outcome) => {
      turnOver = outcome === 'ended';
      closeIfDone();
    },
    (err: unknown) => {
      onUnexpected(err);
      socket.close(1011, 'internal error');
    },
  );

  const handle = async (frame: ClientFrame): Promise<ServerFrame> => {
    // A link revoked since the socket opened refuses what comes after (401), as every HTTP request would.
    const acting = caller.link
      ? { ...(await context.links.callerOfLink(caller.link.id)), token: caller.token }
      : caller;
    if (frame.type === 'cancel') {
      await cancelTurn(context.client, acting, turnId);
      return { type: 'ack', requestId: frame.requestId, cancelRequested: true };
    }
    const accepted = await answerCheckpoint(
      context.client,
      acting,
      turnId,
      frame.checkpointId,
      frame.answer,
      context.config,
      undefined,
      context.live,
    );
    return { type: 'ack', requestId: frame.requestId, ...accepted };
  };

  /** The frame's charge against the user's rate limit; null when it is within the limit (or there is none). */
  const overLimit = async (): Promise<HttpError | null> => {
    const limiter = context.limits.perUser;
    if (!limiter) return null;
    const decision = await limiter.take(userBucket(caller));
    return decision.allowed ? null : rateLimited(decision, 'per user (WebSocket frames count as requests)');
  };

  const receive = async (data: string, isBinary: boolean): Promise<void> => {
    const limited = await overLimit();
    if (limited) return sendError(limited);
    if (isBinary) return sendError(new HttpError(400, 'invalid_request', 'Send text frames of JSON.'));
    const frame = parseClientFrame(data);
    if ('invalid' in frame) return sendError(frame.invalid, frame.requestId);
    if (caller.token && caller.token.scope !== 'write') {
      return sendError(
        new HttpError(
          403,
          'forbidden',
          'This socket was opened with a read-only stream token; ask POST /v1/stream-tokens for {"scope": "write"} to answer checkpoints or cancel.',
        ),
        frame.requestId,
      );
    }
    if (pending >= maxPendingRequests) {
      const message = `At most ${maxPendingRequests} requests may be in flight on one socket; wait for their replies.`;
      return sendError(new HttpError(429, 'rate_limited', message), frame.requestId);
    }
    pending += 1;
    try {
      const mark = follower.mark();
      send(await handle(frame));
      follower.poke(mark);
    } catch (err) {
      const { status, body, unexpected, retryAfterSeconds } = errorReply(err);
      if (unexpected) onUnexpected(err);
      send({
        type: 'error',
        requestId: frame.requestId,
        status,
        error: body.error,
        ...(retryAfterSeconds !== undefined ? { retryAfter: retryAfterSeconds } : {}),
      });
    } finally {
      pending -= 1;
      closeIfDone();
    }
  };

  socket.on('message', (data, isBinary) => {
    receive(isBinary ? '' : data.toString(), isBinary).catch((err: unknown) => onUnexpected(err));
  });
}
