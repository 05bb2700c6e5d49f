import { SkillflowApiError } from './errors';
import { TurnSocket, type WebSocketConstructor } from './socket';
import { readServerSentEvents, ServerSentEventParser } from './sse';
import type {
  AnswerAccepted,
  CheckpointAnswer,
  LoggedEvent,
  Session,
  SessionList,
  Skill,
  SkillList,
  StartedTurnReply,
  StreamToken,
  StreamTokenScope,
  StreamEvent,
  Turn,
  TurnFilter,
  TurnList,
  TurnRequest,
} from './types';

export type * from './types';
export { SkillflowApiError } from './errors';
export { ServerSentEventParser, readServerSentEvents, type ServerSentEvent } from './sse';
export { TurnSocket, type WebSocketConstructor, type WebSocketLike } from './socket';

export interface ClientOptions {
  /** The API's base URL, e.g. http://127.0.0.1:3000. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <key>`. */
  apiKey?: string;
  /** Another fetch (tests, proxies); default the global one. */
  fetch?: typeof fetch;
  /** The WebSocket class for `openTurnSocket`: default `globalThis.WebSocket`; on Node 20 pass `WebSocket` from `ws`. */
  WebSocket?: WebSocketConstructor;
}

export interface SocketOptions {
  /** The offset of the last event already seen (0: from the start). */
  after?: number;
  /** With an API key: `write` (the default) lets the socket answer checkpoints and cancel, `read` only follows. */
  scope?: StreamTokenScope;
}

export interface FollowOptions {
  /** The offset of the last event already seen (0: from the start). */
  after?: number;
  signal?: AbortSignal;
  /** Reconnections in a row without a new durable event before giving up (default 5). */
  maxReconnects?: number;
  /** The base delay before reconnecting, in ms; default the server's `retry:` time, else 250. */
  retryMs?: number;
}

const defaultMaxReconnects = 5;
const defaultRetryMs = 250;

const terminalTypes = new Set(['done', 'error', 'cancelled']);

/** `Idempotency-Key`: a retry with the same key gets the first request's result (docs/api.md). */
const keyHeader = (options: { idempotencyKey?: string }): Record<string, string> =>
  options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {};

/**
 * A typed client of the skillflow API (docs/api.md); the `skillflow` CLI uses it. Methods are named after the
 * OpenAPI document's operationIds; their types come from the schemas the API validates with.
 */
export class SkillflowClient {
  private readonly baseUrl: string;
  private readonly fetch: typeof fetch;

  constructor(private readonly options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    // Called unbound: browsers refuse the global fetch called as a method of another object.
    this.fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  createSession(options: { idempotencyKey?: string } = {}): Promise<{ id: string }> {
    return this.request('POST', '/v1/sessions', undefined, keyHeader(options));
  }

  listSessions(query: { user?: string; limit?: number; cursor?: string } = {}): Promise<SessionList> {
    return this.request('GET', `/v1/sessions${queryString(query)}`);
  }

  getSession(id: string): Promise<Session> {
    return this.request('GET', `/v1/sessions/${encodeURIComponent(id)}`);
  }

  deleteSession(id: string): Promise<void> {
    return this.request('DELETE', `/v1/sessions/${encodeURIComponent(id)}`);
  }

  /** Starts a turn: the started turn, or with `wait` the turn once it ended or waits at a checkpoint. */
  startTurn(
    sessionId: string,
    request: TurnRequest,
    options: { wait?: boolean; idempotencyKey?: string } = {},
  ): Promise<StartedTurnReply | Turn> {
    return this.request(
      'POST',
      `/v1/sessions/${encodeURIComponent(sessionId)}/turns${options.wait ? '?wait=true' : ''}`,
      request,
      keyHeader(options),
    );
  }

  listTurns(filter: TurnFilter = {}): Promise<TurnList> {
    return this.request('GET', `/v1/turns${queryString(filter)}`);
  }

  getTurn(id: string): Promise<Turn> {
    return this.request('GET', `/v1/turns/${encodeURIComponent(id)}`);
  }

  async getTurnLog(id: string, after = 0): Promise<LoggedEvent[]> {
    const log = await this.request<{ events: LoggedEvent[] }>(
      'GET',
      `/v1/turns/${encodeURIComponent(id)}/log${queryString({ after })}`,
    );
    return log.events;
  }

  answerCheckpoint(
    turnId: string,
    checkpointId: string,
    answer: CheckpointAnswer,
    options: { idempotencyKey?: string } = {},
  ): Promise<AnswerAccepted> {
    return this.request(
      'POST',
      `/v1/turns/${encodeURIComponent(turnId)}/checkpoints/${encodeURIComponent(checkpointId)}`,
      answer,
      keyHeader(options),
    );
  }

  cancelTurn(id: string): Promise<{ id: string; cancelRequested: true }> {
    return this.request('POST', `/v1/turns/${encodeURIComponent(id)}/cancel`);
  }

  listSkills(category?: string): Promise<SkillList> {
    return this.request('GET', `/v1/skills${queryString({ category })}`);
  }

  getSkill(name: string): Promise<Skill> {
    return this.request('GET', `/v1/skills/${encodeURIComponent(name)}`);
  }

  /** A short-lived token that opens this turn's SSE or WebSocket stream with `?token=` (for browsers; docs/api.md). */
  createStreamToken(turnId: string, scope: StreamTokenScope = 'read'): Promise<StreamToken> {
    return this.request('POST', '/v1/stream-tokens', { turnId, scope });
  }

  /**
   * Opens the turn's WebSocket: its events, and checkpoint answers and cancels over the same connection. With an API
   * key it first gets a stream token (browsers' WebSockets cannot send headers), so a refused key or an unknown turn
   * fails here with the API's error. Uses `options.WebSocket` from the constructor, else `globalThis.WebSocket`.
   */
  async openTurnSocket(turnId: string, options: SocketOptions = {}): Promise<TurnSocket> {
    const WebSocket = this.options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (!WebSocket)
      throw new TypeError(
        'This runtime has no globalThis.WebSocket (Node 20 has none): pass one, e.g. new SkillflowClient({ baseUrl, WebSocket }) with WebSocket from the ws package.',
      );
    const after = options.after ?? 0;
    const query: Record<string, string | number> = { after };
    if (this.options.apiKey) query.token = (await this.createStreamToken(turnId, options.scope ?? 'write')).token;
    const url = `${this.baseUrl.replace(/^http/, 'ws')}/v1/turns/${encodeURIComponent(turnId)}/ws${queryString(query)}`;
    return TurnSocket.open(WebSocket, url, turnId, after);
  }

  /**
   * The turn's events as they happen (SSE), from after `after`, until its terminal event. A stream that fails or ends
   * before the terminal event is resumed with `Last-Event-ID` from the last durable event, so nothing is lost or
   * repeated, after the server's `retry:` time (or `retryMs`) times the attempt; after `maxReconnects` reconnections in
   * a row that brought no new durable event it throws `SkillflowApiError` `stream_interrupted`. `signal` stops following.
   */
  async *followTurn(id: string, options: FollowOptions = {}): AsyncGenerator<StreamEvent> {
    const maxReconnects = options.maxReconnects ?? defaultMaxReconnects;
    const parser = new ServerSentEventParser();
    let after = options.after ?? 0;
    for (let failures = 0; ; failures += 1) {
      const before = after;
      let cause: unknown;
      try {
        const response = await this.send(
          'GET',
          `/v1/turns/${encodeURIComponent(id)}/events`,
          undefined,
          { 'last-event-id': String(after), accept: 'text/event-stream' },
          options.signal,
        );
        if (!response.ok) throw await apiError(response);
        for await (const message of readServerSentEvents(response.body!, parser)) {
          const event = JSON.parse(message.data) as StreamEvent;
          if ('offset' in event && typeof event.offset === 'number') after = event.offset;
          yield event;
          if (terminalTypes.has(event.type)) return;
        }
      } catch (err) {
        if (options.signal?.aborted) return;
        if (err instanceof SkillflowApiError && err.status >= 400 && err.status < 500 && err.status !== 429) throw err;
        cause = err;
      }
      if (options.signal?.aborted) return;
      if (after !== before) failures = 0;
      if (failures >= maxReconnects) {
        const how = cause === undefined ? 'ended without its terminal event' : `failed (${(cause as Error).message})`;
        throw new SkillflowApiError(
          0,
          'stream_interrupted',
          `The event stream of turn ${id} ${how} ${failures + 1} times in a row; follow it again later from offset ${after}.`,
          undefined,
          undefined,
          { cause },
        );
      }
      await sleep((options.retryMs ?? parser.retryMs ?? defaultRetryMs) * (failures + 1), options.signal);
    }
  }

  private async request<T>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<T> {
    const response = await this.send(method, path, body, headers);
    if (!response.ok) throw await apiError(response);
    return (response.status === 204 ? undefined : await response.json()) as T;
  }

  private async send(
    method: string,
    path: string,
    body: unknown,
    headers: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<Response> {
    try {
      return await this.fetch(`${this.baseUrl}${path}`, {
        method,
        headers: {
          ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
    } catch (err) {
      if (signal?.aborted) throw err;
      const cause = (err as { cause?: { code?: string; message?: string; errors?: { code?: string }[] } }).cause;
      const reason = cause?.code ?? cause?.errors?.[0]?.code ?? cause?.message ?? (err as Error).message;
      throw new SkillflowApiError(
        0,
        'unreachable',
        `The skillflow API at ${this.baseUrl} does not answer (${reason}).`,
      );
    }
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

async function apiError(response: Response): Promise<SkillflowApiError> {
  const text = await response.text();
  const retryAfter = Number(response.headers.get('retry-after') ?? Number.NaN);
  const retryAfterSeconds = Number.isFinite(retryAfter) ? retryAfter : undefined;
  try {
    const { error } = JSON.parse(text) as { error: { code: string; message: string; requestId?: string } };
    return new SkillflowApiError(
      response.status,
      error.code,
      error.message,
      error.requestId ?? response.headers.get('x-request-id') ?? undefined,
      retryAfterSeconds,
    );
  } catch {
    return new SkillflowApiError(
      response.status,
      'http_error',
      `HTTP ${response.status}: ${text.slice(0, 200)}`,
      response.headers.get('x-request-id') ?? undefined,
      retryAfterSeconds,
    );
  }
}

function queryString(query: Record<string, string | number | boolean | undefined>): string {
  const entries = Object.entries(query).filter(
    (entry): entry is [string, string | number | boolean] => entry[1] !== undefined,
  );
  return entries.length === 0
    ? ''
    : `?${new URLSearchParams(entries.map(([key, value]): [string, string] => [key, String(value)])).toString()}`;
}
