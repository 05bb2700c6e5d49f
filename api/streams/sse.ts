import type { FastifyReply } from 'fastify';
import type { StreamItem } from './follow-turn';

const heartbeatMs = 15_000;

/**
 * A Server-Sent Events response. Every item is one unnamed event (`data:` only, so EventSource's `onmessage` gets them
 * all) whose JSON has a `type`; durable events carry their offset as the SSE `id`, live ones none, so Last-Event-ID
 * always names the last durable event received. The reply is hijacked: streams outlive the request timeout.
 */
export class SseResponse {
  private readonly heartbeat: NodeJS.Timeout;
  private open = true;

  constructor(private readonly reply: FastifyReply) {
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
    if (!this.open) return;
    const id = 'offset' in item && typeof item.offset === 'number' ? `id: ${item.offset}\n` : '';
    this.reply.raw.write(`${id}data: ${JSON.stringify(item)}\n\n`);
  }

  comment(text: string): void {
    if (this.open) this.reply.raw.write(`: ${text}\n\n`);
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
