import http from 'node:http';
import WebSocket from 'ws';

/** Clients for the API's streams over real HTTP, as a browser or a CLI would use them. */

/** A parsed JSON object, loosely typed for assertions. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = Record<string, any>;

export interface SseMessage {
  id?: string;
  data: Json;
}

async function until<T>(find: () => T | undefined, timeoutMs: number, what: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** An EventSource-like reader: parses `id:` and `data:` lines; `ended` settles when the server ends the stream. */
export class SseClient {
  readonly messages: SseMessage[] = [];
  readonly comments: string[] = [];
  readonly ended: Promise<void>;
  private request!: http.ClientRequest;

  private constructor(
    readonly status: number,
    readonly headers: http.IncomingHttpHeaders,
    response: http.IncomingMessage,
  ) {
    let buffer = '';
    response.setEncoding('utf8');
    this.ended = new Promise((resolve) => {
      response.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          this.parse(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
        }
      });
      response.on('end', () => resolve());
      response.on('close', () => resolve());
      response.on('error', () => resolve());
    });
  }

  static open(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    return new Promise((resolve, reject) => {
      const request = http.get(url, { headers: { accept: 'text/event-stream', ...headers } }, (response) => {
        if (response.statusCode !== 200) {
          let body = '';
          response.on('data', (chunk) => (body += chunk));
          response.on('end', () =>
            reject(
              Object.assign(new Error(`SSE ${response.statusCode}: ${body}`), {
                status: response.statusCode,
                body,
                headers: response.headers,
              }),
            ),
          );
          return;
        }
        const client = new SseClient(response.statusCode, response.headers, response);
        client.request = request;
        resolve(client);
      });
      request.on('error', reject);
    });
  }

  get events(): Json[] {
    return this.messages.map((message) => message.data);
  }

  waitFor(match: (data: Json) => boolean, timeoutMs = 20_000): Promise<Json> {
    return until(
      () => this.events.find(match),
      timeoutMs,
      () => `an SSE event; got ${JSON.stringify(this.events.map((e) => e.type))}`,
    );
  }

  close(): void {
    this.request.destroy();
  }

  private parse(block: string): void {
    let id: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) this.comments.push(line.slice(1).trim());
      else if (line.startsWith('id: ')) id = line.slice(4);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (data.length > 0) this.messages.push({ ...(id !== undefined ? { id } : {}), data: JSON.parse(data.join('\n')) });
  }
}

/** A WebSocket client that records every frame and how the socket closed. */
export class WsClient {
  readonly frames: Json[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => this.frames.push(JSON.parse(data.toString())));
    this.closed = new Promise((resolve) =>
      socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
  }

  static open(url: string, headers: Record<string, string> = {}): Promise<WsClient> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, { headers });
      const client = new WsClient(socket);
      socket.once('open', () => resolve(client));
      socket.once('unexpected-response', (request, response) => {
        let body = '';
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () => {
          request.destroy();
          reject(
            Object.assign(new Error(`WS ${response.statusCode}: ${body}`), {
              status: response.statusCode,
              body,
              headers: response.headers,
            }),
          );
        });
      });
      socket.once('error', reject);
    });
  }

  get events(): Json[] {
    return this.frames.filter((frame) => frame.type === 'event').map((frame) => frame.event);
  }

  send(frame: unknown): void {
    this.socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  waitForEvent(match: (event: Json) => boolean, timeoutMs = 20_000): Promise<Json> {
    return until(
      () => this.events.find(match),
      timeoutMs,
      () => `a WS event; got ${JSON.stringify(this.events.map((e) => e.type))}`,
    );
  }

  waitForReply(requestId: string | number, timeoutMs = 20_000): Promise<Json> {
    return until(
      () =>
        this.frames.find((frame) => (frame.type === 'ack' || frame.type === 'error') && frame.requestId === requestId),
      timeoutMs,
      () => `the reply to ${requestId}; got ${JSON.stringify(this.frames.filter((f) => f.type !== 'event'))}`,
    );
  }

  close(): void {
    this.socket.close();
  }
}
