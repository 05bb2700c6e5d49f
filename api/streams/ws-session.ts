import type { WebSocket } from 'ws';
import type { Caller } from '../auth';
import type { ApiContext } from '../context';
import { errorReply } from '../errors';
import { answerCheckpoint, cancelTurn } from '../turn-actions';
import { TurnFollower } from './follow-turn';
import { parseClientFrame, type ClientFrame, type ServerFrame } from './ws-frames';

export interface WsSessionOptions {
  context: ApiContext;
  caller: Caller;
  turnId: string;
  after: number;
  socket: WebSocket;
  onUnexpected: (err: unknown) => void;
}

/** Above this many unsent bytes the client is not reading: it is disconnected rather than buffered without bound. */
const maxBufferedBytes = 8 * 1024 * 1024;
/** Requests one socket may have in flight; more are refused with 429 rather than queued. */
export const maxPendingRequests = 8;

/**
 * One client on a turn's WebSocket: the turn's events as `event` frames (like SSE), and checkpoint decisions and
 * cancels from the client, each answered by an `ack` or an `error` with the HTTP route's status and code. The socket
 * closes (1000) after the terminal event and any requests still being answered.
 */
export function runWsSession({ context, caller, turnId, after, socket, onUnexpected }: WsSessionOptions): void {
  const abort = new AbortController();
  let pending = 0;
  let turnOver = false;
  const send = (frame: ServerFrame) => {
    if (socket.readyState !== socket.OPEN) return;
    if (socket.bufferedAmount > maxBufferedBytes) {
      socket.close(1008, 'client too slow');
      return;
    }
    socket.send(JSON.stringify(frame));
  };
  const closeIfDone = () => {
    if (turnOver && pending === 0 && socket.readyState === socket.OPEN) socket.close(1000, 'turn ended');
  };
  const unregister = context.streams.add(() => socket.close(1001, 'server shutting down'));
  socket.on('close', () => {
    abort.abort();
    unregister();
  });

  const follower = new TurnFollower({
    client: context.client,
    live: context.live,
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
    if (frame.type === 'cancel') {
      await cancelTurn(context.client, caller, turnId);
      return { type: 'ack', requestId: frame.requestId, cancelRequested: true };
    }
    const accepted = await answerCheckpoint(context.client, caller, turnId, frame.checkpointId, frame.answer);
    return { type: 'ack', requestId: frame.requestId, ...accepted };
  };

  socket.on('message', (data, isBinary) => {
    if (isBinary) {
      send({ type: 'error', status: 400, error: { code: 'invalid_request', message: 'Send text frames of JSON.' } });
      return;
    }
    const frame = parseClientFrame(data.toString());
    if ('invalid' in frame) {
      send({ type: 'error', requestId: frame.requestId, status: 400, error: { code: frame.invalid.code, message: frame.invalid.message } });
      return;
    }
    if (pending >= maxPendingRequests) {
      const message = `At most ${maxPendingRequests} requests may be in flight on one socket; wait for their replies.`;
      send({ type: 'error', requestId: frame.requestId, status: 429, error: { code: 'rate_limited', message } });
      return;
    }
    pending += 1;
    handle(frame)
      .then(
        (ack) => {
          send(ack);
          follower.poke();
        },
        (err: unknown) => {
          const { status, body, unexpected } = errorReply(err);
          if (unexpected) onUnexpected(err);
          send({ type: 'error', requestId: frame.requestId, status, error: body.error });
        },
      )
      .finally(() => {
        pending -= 1;
        closeIfDone();
      });
  });
}
