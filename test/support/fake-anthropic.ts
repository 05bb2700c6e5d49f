import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { MessagesRequestBody, ScriptedUsage } from './fake-anthropic-types';
import { PromptCache, type PromptCacheOptions } from './fake-prompt-cache';

export type { MessagesRequestBody, ScriptedUsage } from './fake-anthropic-types';

/**
 * A scripted stand-in for the Anthropic Messages API on 127.0.0.1, spoken to through the real SDK:
 * `POST /v1/messages` answers JSON, or SSE when the body asks for `stream: true`.
 */

export type ScriptedBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; name: string; input: unknown; id?: string }
  | { type: 'thinking'; thinking: string; signature?: string }
  | { type: 'redacted_thinking'; data: string };

export interface ScriptedMessage {
  content: ScriptedBlock[];
  /** Defaults to `tool_use` when a block is a tool_use, else `end_turn`. */
  stopReason?: string;
  usage?: ScriptedUsage;
  /** Pause between two SSE events. */
  delayMs?: number;
}

export interface ScriptedHttpError {
  error: { status: number; type: string; message: string; headers?: Record<string, string> };
}

/** A 200 whose stream starts (with `afterText` as a partial text block) and then carries an SSE `error` event. */
export interface ScriptedStreamError {
  streamError: { type: string; message: string };
  afterText?: string;
  delayMs?: number;
}

export type ScriptedResponse = ScriptedMessage | ScriptedHttpError | ScriptedStreamError;

export interface RecordedRequest {
  body: MessagesRequestBody;
  headers: http.IncomingHttpHeaders;
  /** From `x-api-key`, or from `Authorization: Bearer`, which is how SDK 1.x sends `apiKey`. */
  apiKey: string | undefined;
  anthropicVersion: string | undefined;
  /** Settles when the response is over: `aborted` when the client closed the connection before the end. */
  finished: Promise<'completed' | 'aborted'>;
  /** `performance.now()` when the request arrived, and when its response was completely written (unset until then). */
  receivedAt: number;
  respondedAt?: number;
  /** What the fake answered, once decided. */
  reply?: ScriptedResponse;
  /** The usage it reported, for a message. */
  usage?: Required<ScriptedUsage>;
}

export interface FakeAnthropicOptions {
  /** Reports prompt-cache usage as the API would (test/support/fake-prompt-cache.ts) instead of the scripted tokens. */
  promptCache?: PromptCacheOptions;
}

export type ResponseHandler = (
  body: MessagesRequestBody,
  request: RecordedRequest,
) => ScriptedResponse | Promise<ScriptedResponse>;

export interface FakeAnthropic {
  /** Base URL for the SDK (`baseURL` / ANTHROPIC_BASE_URL). */
  url: string;
  requests: RecordedRequest[];
  /** Queued responses answer the next requests in order, before any handler. */
  enqueue(...responses: ScriptedResponse[]): void;
  /** Answers every request that finds the queue empty; `undefined` removes the handler. */
  respond(handler: ResponseHandler | undefined): void;
  /** Queued responses not consumed yet. */
  readonly pending: number;
  close(): Promise<void>;
}

export const text = (value: string): ScriptedBlock => ({ type: 'text', text: value });

export const toolUse = (name: string, input: unknown, id?: string): ScriptedBlock => ({
  type: 'tool_use',
  name,
  input,
  id,
});

const base62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Ids shaped like Anthropic's: prefix, `_01`, then 22 base62 characters. */
export const anthropicId = (prefix: 'msg' | 'toolu' | 'req'): string =>
  `${prefix}_01${Array.from(randomBytes(22), (byte) => base62[byte % 62]).join('')}`;

export async function startFakeAnthropic(options: FakeAnthropicOptions = {}): Promise<FakeAnthropic> {
  const cache = options.promptCache ? new PromptCache(options.promptCache) : undefined;
  const queue: ScriptedResponse[] = [];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let handler: ResponseHandler | undefined;

  const server = http.createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendError(res, 500, 'api_error', `fake-anthropic crashed: ${String(err)}`);
      else res.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const receivedAt = performance.now();
    const finished = new Promise<'completed' | 'aborted'>((resolve) => {
      res.on('close', () => resolve(res.writableFinished ? 'completed' : 'aborted'));
    });
    const raw = await readBody(req);
    if (req.method !== 'POST' || new URL(req.url ?? '/', 'http://x').pathname !== '/v1/messages') {
      return sendError(
        res,
        404,
        'not_found_error',
        `fake-anthropic serves POST /v1/messages only, not ${req.method} ${req.url}`,
      );
    }
    let body: MessagesRequestBody;
    try {
      body = JSON.parse(raw) as MessagesRequestBody;
    } catch {
      return sendError(res, 400, 'invalid_request_error', 'The request body is not valid JSON.');
    }
    const request: RecordedRequest = {
      body,
      headers: req.headers,
      apiKey: header(req, 'x-api-key') ?? header(req, 'authorization')?.replace(/^Bearer\s+/i, ''),
      anthropicVersion: header(req, 'anthropic-version'),
      finished,
      receivedAt,
    };
    res.on('finish', () => {
      request.respondedAt = performance.now();
    });
    requests.push(request);
    if (!request.apiKey) return sendError(res, 401, 'authentication_error', 'x-api-key header is required');
    if (!request.anthropicVersion)
      return sendError(res, 400, 'invalid_request_error', 'anthropic-version: header is required');
    const refused = refusalOf(body);
    if (refused) return sendError(res, 400, 'invalid_request_error', refused);

    const script = queue.shift() ?? (handler ? await handler(body, request) : undefined);
    request.reply = script;
    if (!script) {
      return sendError(
        res,
        500,
        'api_error',
        `fake-anthropic: no scripted response for request #${requests.length} (model ${body.model}); ` +
          'the test must call fake.enqueue(...) or fake.respond(...) for it',
      );
    }
    if ('error' in script) {
      return sendError(res, script.error.status, script.error.type, script.error.message, script.error.headers);
    }
    if ('streamError' in script && !body.stream) {
      return sendError(
        res,
        statusForErrorType(script.streamError.type),
        script.streamError.type,
        script.streamError.message,
      );
    }
    const message = 'content' in script ? messageOf(script, body.model, cache?.usageOf(body)) : undefined;
    request.usage = message?.usage;
    if (!body.stream && message) {
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': anthropicId('req') });
      res.end(JSON.stringify(message));
      return;
    }
    const events = message ? streamEventsOf(message) : streamErrorEventsOf(script as ScriptedStreamError, body.model);
    await writeStream(res, events, script.delayMs ?? 0);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...responses) => void queue.push(...responses),
    respond: (next) => {
      handler = next;
    },
    get pending() {
      return queue.length;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        for (const socket of sockets) socket.destroy();
      }),
  };
}

/**
 * What each documented model takes of thinking (Anthropic's thinking and adaptive-thinking pages, REFERENCE.md section
 * 8): from 4.7 on only `{type: "adaptive"}`, the budget form refused; the 4.6 models both; 4.5 and older only the
 * budget form. Ids by their documented prefixes; a model not listed (the tests' `claude-test`) is not checked.
 */
const documentedThinking: Array<[prefix: string, takes: 'adaptive' | 'both' | 'budget']> = [
  ['claude-opus-5', 'adaptive'],
  ['claude-sonnet-5', 'adaptive'],
  ['claude-haiku-5', 'adaptive'],
  ['claude-mythos', 'adaptive'],
  ['claude-fable', 'adaptive'],
  ['claude-opus-4-8', 'adaptive'],
  ['claude-opus-4-7', 'adaptive'],
  ['claude-opus-4-6', 'both'],
  ['claude-sonnet-4-6', 'both'],
  ['claude-opus-4-5', 'budget'],
  ['claude-sonnet-4-5', 'budget'],
  ['claude-haiku-4-5', 'budget'],
  ['claude-opus-4-1', 'budget'],
  ['claude-opus-4-0', 'budget'],
  ['claude-sonnet-4-0', 'budget'],
  ['claude-opus-4-2025', 'budget'],
  ['claude-sonnet-4-2025', 'budget'],
  ['claude-3-7-sonnet', 'budget'],
];
const documentedEfforts = ['low', 'medium', 'high', 'xhigh', 'max'];

/** The 400 message the API answers a request shape with, as documented; null for a request it takes. */
function refusalOf(body: MessagesRequestBody): string | null {
  const takes = documentedThinking.find(([prefix]) => body.model.startsWith(prefix))?.[1];
  const thinking = body.thinking as { type?: unknown; budget_tokens?: unknown } | undefined;
  if (thinking?.type === 'enabled') {
    if (takes === 'adaptive')
      return `thinking.type.enabled is not supported for this model. Use thinking.type.adaptive and output_config.effort to control thinking behavior.`;
    const budget = thinking.budget_tokens;
    if (typeof budget !== 'number' || !Number.isInteger(budget) || budget < 1024)
      return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
    if (budget >= body.max_tokens) return '`max_tokens` must be greater than `thinking.budget_tokens`.';
  } else if (thinking?.type === 'adaptive') {
    if (takes === 'budget')
      return `thinking.type.adaptive is not supported for this model. Use thinking.type.enabled with budget_tokens.`;
  } else if (thinking !== undefined && thinking.type !== 'disabled') {
    return `thinking.type: Input tag ${JSON.stringify(thinking.type)} found using 'type' does not match any of the expected tags: 'adaptive', 'disabled', 'enabled'`;
  }
  const forced = (body.tool_choice as { type?: string } | undefined)?.type;
  if ((thinking?.type === 'enabled' || thinking?.type === 'adaptive') && (forced === 'any' || forced === 'tool')) {
    return 'Thinking may not be enabled when tool_choice forces tool use.';
  }
  const effort = (body.output_config as { effort?: unknown } | undefined)?.effort;
  if (effort !== undefined && effort !== null && !documentedEfforts.includes(effort as string)) {
    return `output_config.effort: Input should be ${documentedEfforts.map((level) => `'${level}'`).join(', ')}`;
  }
  return null;
}

type SseEvent = { event: string; data: Record<string, unknown> };

interface ApiMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: Array<Record<string, unknown>>;
  stop_reason: string;
  stop_sequence: null;
  usage: Required<ScriptedUsage>;
}

function messageOf(script: ScriptedMessage, model: string, cached?: Partial<ScriptedUsage>): ApiMessage {
  const content = script.content.map((block) =>
    block.type === 'tool_use'
      ? { ...block, id: block.id ?? anthropicId('toolu') }
      : block.type === 'thinking'
        ? { ...block, signature: block.signature ?? `sig-${block.thinking.length}` }
        : block,
  );
  const usesTool = content.some((block) => block.type === 'tool_use');
  return {
    id: anthropicId('msg'),
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: script.stopReason ?? (usesTool ? 'tool_use' : 'end_turn'),
    stop_sequence: null,
    usage: {
      input_tokens: 10,
      output_tokens: 5,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
      ...script.usage,
      ...cached,
    },
  };
}

function streamEventsOf(message: ApiMessage): SseEvent[] {
  const { usage, stop_reason, ...start } = message;
  const events: SseEvent[] = [
    {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: { ...start, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
      },
    },
    { event: 'ping', data: { type: 'ping' } },
  ];
  message.content.forEach((block, index) => events.push(...blockEvents(block, index)));
  events.push(
    {
      event: 'message_delta',
      data: {
        type: 'message_delta',
        delta: { stop_reason, stop_sequence: null },
        usage: { output_tokens: usage.output_tokens },
      },
    },
    { event: 'message_stop', data: { type: 'message_stop' } },
  );
  return events;
}

function blockEvents(block: Record<string, unknown>, index: number): SseEvent[] {
  const delta = (payload: Record<string, unknown>): SseEvent => ({
    event: 'content_block_delta',
    data: { type: 'content_block_delta', index, delta: payload },
  });
  const start = (contentBlock: Record<string, unknown>): SseEvent => ({
    event: 'content_block_start',
    data: { type: 'content_block_start', index, content_block: contentBlock },
  });
  const stop: SseEvent = { event: 'content_block_stop', data: { type: 'content_block_stop', index } };
  switch (block.type) {
    case 'text':
      return [
        start({ type: 'text', text: '' }),
        ...chunks(String(block.text)).map((t) => delta({ type: 'text_delta', text: t })),
        stop,
      ];
    case 'tool_use':
      return [
        start({ type: 'tool_use', id: block.id, name: block.name, input: {} }),
        ...chunks(JSON.stringify(block.input ?? {}), 4).map((json) =>
          delta({ type: 'input_json_delta', partial_json: json }),
        ),
        stop,
      ];
    case 'thinking':
      return [
        start({ type: 'thinking', thinking: '', signature: '' }),
        ...chunks(String(block.thinking)).map((t) => delta({ type: 'thinking_delta', thinking: t })),
        delta({ type: 'signature_delta', signature: block.signature }),
        stop,
      ];
    default:
      return [start(block), stop];
  }
}

function streamErrorEventsOf(script: ScriptedStreamError, model: string): SseEvent[] {
  const events = streamEventsOf(messageOf({ content: script.afterText ? [text(script.afterText)] : [] }, model));
  const partial = script.afterText ? events.slice(0, -3) : events.slice(0, 2);
  const error = { type: 'error', error: { type: script.streamError.type, message: script.streamError.message } };
  return [...partial, { event: 'error', data: error }];
}

/** Splits a string into up to `parts` pieces, so deltas and partial JSON arrive in several chunks. */
function chunks(value: string, parts = 3): string[] {
  if (value === '') return [];
  const size = Math.max(1, Math.ceil(value.length / parts));
  const pieces: string[] = [];
  for (let i = 0; i < value.length; i += size) pieces.push(value.slice(i, i + size));
  return pieces;
}

async function writeStream(res: http.ServerResponse, events: SseEvent[], delayMs: number): Promise<void> {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'request-id': anthropicId('req'),
  });
  for (const [i, { event, data }] of events.entries()) {
    if (i > 0 && delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (res.destroyed) return;
    res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }
  res.end();
}

function sendError(
  res: http.ServerResponse,
  status: number,
  type: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  const requestId = headers['request-id'] ?? anthropicId('req');
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': requestId, ...headers });
  res.end(JSON.stringify({ type: 'error', error: { type, message }, request_id: requestId }));
}

function statusForErrorType(type: string): number {
  const statuses: Record<string, number> = {
    invalid_request_error: 400,
    authentication_error: 401,
    permission_error: 403,
    not_found_error: 404,
    request_too_large: 413,
    rate_limit_error: 429,
    overloaded_error: 529,
  };
  return statuses[type] ?? 500;
}

function header(req: http.IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}
