import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

/** A plain HTTP client of the API, as an application would use it: JSON routes and the SSE event stream. */

/**
 * A 503 (Temporal busy, an update that timed out, Temporal unreachable: docs/api.md) is retried as its retry-after says,
 * with the request's Idempotency-Key, so a retry is never applied twice; after this many attempts it counts as failed.
 */
const attemptsOn503 = 5;
/** When a 503 has no retry-after. */
const defaultRetryAfterS = 5;

export interface BenchEvent {
  type: string;
  offset?: number;
  at?: string;
  [key: string]: unknown;
}

export class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    what: string,
    body: string,
  ) {
    super(`${what}: HTTP ${status} ${body.slice(0, 300)}`);
  }
}

export class BenchClient {
  /** Responses by HTTP status, over the whole run. */
  readonly statuses = new Map<number, number>();

  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string,
    private readonly signal: AbortSignal,
  ) {}

  private async request<T>(method: string, path: string, body: unknown, expected: number[]): Promise<T> {
    const idempotencyKey = randomUUID();
    for (let attempt = 1; ; attempt++) {
      const response = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.apiKey}`,
          'idempotency-key': idempotencyKey,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: this.signal,
      });
      this.statuses.set(response.status, (this.statuses.get(response.status) ?? 0) + 1);
      const raw = await response.text();
      if (response.status === 503 && attempt < attemptsOn503) {
        const retryAfterS = Number(response.headers.get('retry-after')) || defaultRetryAfterS;
        await sleep(retryAfterS * 1000, undefined, { signal: this.signal });
        continue;
      }
      if (!expected.includes(response.status)) throw new HttpStatusError(response.status, `${method} ${path}`, raw);
      return JSON.parse(raw) as T;
    }
  }

  async createSession(): Promise<string> {
    return (await this.request<{ id: string }>('POST', '/v1/sessions', undefined, [201])).id;
  }

  async startTurn(sessionId: string, message: string): Promise<string> {
    return (await this.request<{ id: string }>('POST', `/v1/sessions/${sessionId}/turns`, { message }, [202])).id;
  }

  async answer(turnId: string, checkpointId: string, decision: Record<string, unknown>): Promise<void> {
    await this.request('POST', `/v1/turns/${turnId}/checkpoints/${checkpointId}`, decision, [200]);
  }

  /**
   * Follows GET /v1/turns/:id/events until the terminal event, which it returns; `onEvent` sees every event. `stop`
   * ends it sooner (rejecting), besides the client's own signal.
   */
  async follow(turnId: string, onEvent: (event: BenchEvent) => void, stop?: AbortSignal): Promise<BenchEvent> {
    const response = await fetch(`${this.baseUrl}/v1/turns/${turnId}/events`, {
      headers: { authorization: `Bearer ${this.apiKey}`, accept: 'text/event-stream' },
      signal: stop ? AbortSignal.any([this.signal, stop]) : this.signal,
    });
    this.statuses.set(response.status, (this.statuses.get(response.status) ?? 0) + 1);
    if (response.status !== 200 || !response.body)
      throw new HttpStatusError(response.status, `GET /v1/turns/${turnId}/events`, await response.text());
    const decoder = new TextDecoder();
    let buffer = '';
    const reader = response.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) throw new Error(`the event stream of ${turnId} ended without a terminal event`);
        buffer += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block
            .split('\n')
            .filter((line) => line.startsWith('data:'))
            .map((line) => line.slice(5).trimStart());
          if (data.length === 0) continue;
          const event = JSON.parse(data.join('\n')) as BenchEvent;
          onEvent(event);
          if (event.type === 'done' || event.type === 'error' || event.type === 'cancelled') return event;
        }
      }
    } finally {
      await reader.cancel().catch(() => undefined);
    }
  }
}
