import { SkillflowApiError } from './errors';
import type { AnswerAccepted, CheckpointAnswer, StreamEvent, TurnSocketFrame, WsRequestId } from './types';

/** The part of the WHATWG WebSocket that the client uses: browsers', Node 22's global one and the `ws` package's. */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: string, listener: (event: never) => void): void;
}

/** A WebSocket class: `globalThis.WebSocket`, or `WebSocket` from the `ws` package. */
export type WebSocketConstructor = new (url: string) => WebSocketLike;

const openState = 1;
const terminalTypes = new Set(['done', 'error', 'cancelled']);

type Settle = { resolve: (value: Record<string, unknown>) => void; reject: (error: SkillflowApiError) => void };
type Ending = { kind: 'terminal' } | { kind: 'closed'; error: SkillflowApiError };

/**
 * One turn over its WebSocket (`GET /v1/turns/:id/ws`, docs/api.md): its events as they happen, and checkpoint
 * answers and cancels whose promises settle with the server's `ack` or `error` frame. Made by
 * `SkillflowClient.openTurnSocket`. The socket does not reconnect: when it closes before the turn's terminal event,
 * `events()` throws `stream_interrupted`, and a new socket opened with `after: socket.lastOffset` goes on from there.
 */
export class TurnSocket {
  /** The offset of the last durable event received (the `after` to resume from). */
  lastOffset: number;
  private readonly queue: StreamEvent[] = [];
  private wake: (() => void) | undefined;
  private ending: Ending | undefined;
  private readonly pending = new Map<WsRequestId, Settle>();
  private nextRequestId = 1;

  private constructor(
    private readonly socket: WebSocketLike,
    readonly turnId: string,
    after: number,
  ) {
    this.lastOffset = after;
    socket.addEventListener('message', (event: { data: unknown }) => this.receive(event.data));
    socket.addEventListener('close', (event: { code: number; reason: string }) => this.closed(event));
  }

  /** Opens the socket at `url`; rejects when it closes or fails before it opened. */
  static open(WebSocket: WebSocketConstructor, url: string, turnId: string, after: number): Promise<TurnSocket> {
    const socket = new WebSocket(url);
    return new Promise((resolve, reject) => {
      const refuse = (why: string) =>
        reject(new SkillflowApiError(0, 'websocket_failed', `The WebSocket of turn ${turnId} did not open (${why}).`));
      socket.addEventListener('error', (event: { message?: string }) => refuse(event.message ?? 'error'));
      socket.addEventListener('close', (event: { code: number }) => refuse(`closed, code ${event.code}`));
      socket.addEventListener('open', () => resolve(new TurnSocket(socket, turnId, after)));
    });
  }

  /** The turn's events until its terminal event (then the server closes the socket). */
  async *events(): AsyncGenerator<StreamEvent> {
    for (;;) {
      const event = this.queue.shift();
      if (event) {
        yield event;
        if (terminalTypes.has(event.type)) return;
        continue;
      }
      if (this.ending?.kind === 'closed') throw this.ending.error;
      if (this.ending) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  answerCheckpoint(checkpointId: string, answer: CheckpointAnswer): Promise<AnswerAccepted> {
    return this.request({ type: 'checkpoint', checkpointId, ...answer }) as Promise<AnswerAccepted>;
  }

  cancel(): Promise<{ cancelRequested: true }> {
    return this.request({ type: 'cancel' }) as Promise<{ cancelRequested: true }>;
  }

  /** Closes the socket; requests still waiting for their reply reject. */
  close(): void {
    this.socket.close(1000, 'client done');
  }

  private request(frame: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (this.ending || this.socket.readyState !== openState) {
      const why =
        this.ending?.kind === 'closed' ? this.ending.error.message : `The WebSocket of turn ${this.turnId} is closed.`;
      return Promise.reject(new SkillflowApiError(0, 'websocket_closed', why));
    }
    const requestId = this.nextRequestId++;
    return new Promise((resolve, reject) => {
      this.pending.set(requestId, { resolve, reject });
      this.socket.send(JSON.stringify({ ...frame, requestId }));
    });
  }

  private receive(data: unknown): void {
    const frame = JSON.parse(String(data)) as TurnSocketFrame;
    if (frame.type === 'event') {
      if (this.ending) return;
      if ('offset' in frame.event && typeof frame.event.offset === 'number') this.lastOffset = frame.event.offset;
      if (terminalTypes.has(frame.event.type)) this.ending = { kind: 'terminal' };
      this.queue.push(frame.event);
      this.wakeReader();
      return;
    }
    // An error without a requestId answers a frame the server could not read (or refused unread, over the rate
    // limit); frames are answered in order, so it is the oldest one waiting.
    const requestId = frame.requestId ?? this.pending.keys().next().value;
    const settle = requestId === undefined ? undefined : this.pending.get(requestId);
    if (!settle) return;
    this.pending.delete(requestId!);
    if (frame.type === 'ack') {
      const { type: _type, requestId: _id, ...reply } = frame;
      settle.resolve(reply);
    } else {
      const { status, error, retryAfter } = frame;
      settle.reject(new SkillflowApiError(status, error.code, error.message, undefined, retryAfter));
    }
  }

  private closed({ code, reason }: { code: number; reason: string }): void {
    const error = new SkillflowApiError(
      0,
      'stream_interrupted',
      `The WebSocket of turn ${this.turnId} closed (${code}${reason ? ` ${reason}` : ''}) before the turn's terminal event; open it again with after: ${this.lastOffset}.`,
    );
    if (!this.ending) this.ending = { kind: 'closed', error };
    for (const settle of this.pending.values())
      settle.reject(
        new SkillflowApiError(0, 'websocket_closed', `The WebSocket of turn ${this.turnId} closed before the reply.`),
      );
    this.pending.clear();
    this.wakeReader();
  }

  private wakeReader(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
