import type { FastifyReply } from 'fastify';
import type { StreamItem } from './follow-turn';
import { maxBufferedStreamBytes } from './open-streams';

const heartbeatMs = 15_000;

/**
 * A Server-Sent Events response. Every item is one unnamed event (`data:` only, so EventSource's `onmessage` gets them
 * all) whose JSON has a `type`; durable events carry their offset as the SSE `id`, live ones none, so Last-Event-ID
 * always names the last durable event received. The reply is hijacked: streams outlive the request timeout.
 * A client that stops reading is disconnected once `maxBufferedBytes` wait unsent (it resumes with Last-Event-ID).
 */
export class SseResponse {
  private readonly heartbeat: NodeJS.Timeout;
  private open = true;

  constructor(
    private readonly reply: FastifyReply,
    private readonly maxBufferedBytes = maxBufferedStreamBytes,
  ) {
    reply.hijack();
    const headers = { ...reply.getHeaders() } as Record<string, string | number | string[]>;
    delete headers['content-length'];
    reply.raw.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
    });
    reply.raw.write('retry: 2000\n\n');
    this.heartbeat = setInterval(() => this.comment('ping'), heartbeatMs);
    reply.raw.on('close', () => this.stop());
  }

  send(item: StreamItem): void {
    const id = 'offset' in item && typeof item.offset === 'number' ? `id: ${item.offset}\n` : '';
    this.write(`${id}data: ${JSON.stringify(item)}\n\n`);
  }

  comment(text: string): void {
    this.write(`: ${text}\n\n`);
  }

  private write(chunk: string): void {
    if (!this.open) return;
    if (this.reply.raw.writableLength > this.maxBufferedBytes) {
      // Not reading: cut it off (the 'close' that follows stops the stream's follower).
      this.stop();
      this.reply.raw.destroy();
      return;
    }
    this.reply.raw.write(chunk);
  }

  end(): void {
    if (!this.open) return;
    this.stop();
    this.reply.raw.end();
  }

  private stop(): void {
    this.open = false;
    clearInterval(this.heartbeat);
  }
}
