import Anthropic from '@anthropic-ai/sdk';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createModelActivities, heartbeatThrottleMs, type ModelDeltaEvent, type ModelDeps } from '../activities/model';
import { maxRetryAfterMs } from '../activities/model-errors';
import type { ChatMessage, ToolDefinition } from '../core/messages';
import { digestOf, replyMessageOf, transcriptMissType } from '../core/transcript';
import { FileStore } from '../lib/store';
import type { ModelRequest, ModelResponse } from '../core/model';
import { startFakeAnthropic, text, toolUse, type FakeAnthropic } from './support/fake-anthropic';

let fake: FakeAnthropic;

beforeEach(async () => {
  fake = await startFakeAnthropic();
});

afterEach(async () => {
  await fake.close();
});

const request: ModelRequest = {
  turnId: 'turn-1',
  system: [{ type: 'text', text: 'You are terse.' }],
  messages: [{ role: 'user', content: 'Hi' }],
};

/** Activity failures are expected here; the worker's WARN line for each one is noise. */
const quietEnvironment = () => new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') });

function setup(overrides: Partial<ModelDeps> = {}) {
  const deltas: Array<{ turnId: string } & ModelDeltaEvent> = [];
  const { callModel } = createModelActivities({
    apiKey: 'sk-test-key',
    baseURL: fake.url,
    model: 'claude-test-1',
    maxTokens: 1024,
    timeoutMs: 10_000,
    publishDelta: (turnId, event) => deltas.push({ turnId, ...event }),
    ...overrides,
  });
  const env = quietEnvironment();
  const run = (req: ModelRequest = request): Promise<ModelResponse> => env.run(callModel, req);
  return { run, env, deltas };
}

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ApplicationFailure)) throw new Error(`expected an ApplicationFailure, got ${String(err)}`);
  return err;
}

describe('thinking and effort, in the form each model takes', () => {
  const thinkingOf = (body: { thinking?: unknown; output_config?: unknown }) => ({
    ...(body.thinking !== undefined ? { thinking: body.thinking } : {}),
    ...(body.output_config !== undefined ? { output_config: body.output_config } : {}),
  });

  it.each<[string, Partial<ModelRequest>, { thinking?: unknown; output_config?: unknown }]>([
    // A turn of older code, or SKILLFLOW_THINKING_BUDGET_TOKENS alone, on the default model: the budget form is refused.
    ['claude-sonnet-5-5', { thinkingBudgetTokens: 2048, maxTokens: 4096 }, { thinking: { type: 'adaptive' } }],
    [
      'claude-opus-4-7',
      { thinking: true, effort: 'high' },
      { thinking: { type: 'adaptive' }, output_config: { effort: 'high' } },
    ],
    ['claude-sonnet-5-5', { thinking: false, effort: 'low' }, { output_config: { effort: 'low' } }],
    [
      'claude-sonnet-4-6',
      { thinking: true, thinkingBudgetTokens: 2048, maxTokens: 4096, effort: 'max' },
      { thinking: { type: 'adaptive' }, output_config: { effort: 'max' } },
    ],
    // 4.5 and older take only the budget form, and no effort here.
    [
      'claude-sonnet-4-5-20250929',
      { thinking: true, thinkingBudgetTokens: 2048, maxTokens: 4096, effort: 'high' },
      { thinking: { type: 'enabled', budget_tokens: 2048 } },
    ],
    ['claude-haiku-4-5', { thinking: true, maxTokens: 4096 }, { thinking: { type: 'enabled', budget_tokens: 2048 } }],
    ['claude-3-7-sonnet-20250219', { thinking: true, maxTokens: 1024 }, {}],
    ['claude-opus-4-1', { thinking: false, thinkingBudgetTokens: 2048, maxTokens: 4096 }, {}],
  ])('%s with %j sends %j, which the API takes', async (model, settings, sent) => {
    fake.enqueue({ content: [text('ok')] });
    await expect(setup().run({ ...request, model, ...settings })).resolves.toMatchObject({
      content: [{ type: 'text', text: 'ok' }],
    });
    expect(thinkingOf(fake.requests[0].body)).toStrictEqual(sent);
  });

  it('the fake refuses, as the API does, the budget form on models from 4.7 on and adaptive thinking on 4.5 and older', async () => {
    const client = new Anthropic({ apiKey: 'sk-test-key', baseURL: fake.url, maxRetries: 0 });
    const ask = (model: string, thinking: Anthropic.ThinkingConfigParam) =>
      client.messages.create({ model, max_tokens: 4096, messages: [{ role: 'user', content: 'Hi' }], thinking });
    await expect(ask('claude-sonnet-5-5', { type: 'enabled', budget_tokens: 2048 })).rejects.toMatchObject({
      status: 400,
      error: { error: { message: expect.stringContaining('thinking.type.enabled is not supported') } },
    });
    await expect(ask('claude-opus-4-7', { type: 'enabled', budget_tokens: 2048 })).rejects.toMatchObject({
      status: 400,
    });
    await expect(ask('claude-sonnet-4-5', { type: 'adaptive' })).rejects.toMatchObject({ status: 400 });
    await expect(ask('claude-sonnet-4-5', { type: 'enabled', budget_tokens: 4096 })).rejects.toMatchObject({
      status: 400,
    });
    const failure = await failureOf(
      setup().run({ ...request, model: 'claude-sonnet-5-5', effort: 'extreme' as never }),
    );
    expect(failure.type).toBe('ModelInvalidRequest');
    fake.enqueue({ content: [text('ok')] }, { content: [text('ok')] });
    await expect(ask('claude-sonnet-4-6', { type: 'enabled', budget_tokens: 2048 })).resolves.toMatchObject({
      content: [{ text: 'ok' }],
    });
    await expect(ask('claude-sonnet-4-6', { type: 'adaptive' })).resolves.toMatchObject({ content: [{ text: 'ok' }] });
  });
});

describe('callModel answers', () => {
  it('maps a plain text answer to plain JSON and sends the request as configured', async () => {
    fake.enqueue({
      content: [text('Hello there, world!')],
      usage: { input_tokens: 12, output_tokens: 7, cache_read_input_tokens: null, cache_creation_input_tokens: null },
    });
    const result = await setup().run();

    expect(result).toStrictEqual({
      id: expect.stringMatching(/^msg_01\w{22}$/),
      model: 'claude-test-1',
      content: [{ type: 'text', text: 'Hello there, world!' }],
      stopReason: 'end_turn',
      usage: { inputTokens: 12, outputTokens: 7, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
    });
    expect(JSON.parse(JSON.stringify(result))).toStrictEqual(result);

    expect(fake.requests).toHaveLength(1);
    const [sent] = fake.requests;
    expect(sent.body).toStrictEqual({
      model: 'claude-test-1',
      max_tokens: 1024,
      system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral' } }] }],
      stream: true,
    });
    expect(sent.apiKey).toBe('sk-test-key');
    expect(sent.anthropicVersion).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(sent.headers['x-stainless-retry-count']).toBe('0');
    await expect(sent.finished).resolves.toBe('completed');
  });

  it('passes model, max tokens, tools and thinking budget from the request', async () => {
    fake.enqueue({ content: [text('ok')] });
    const tools: ToolDefinition[] = [
      { name: 'lookup', description: 'Looks things up.', input_schema: { type: 'object', properties: {} } },
    ];
    await setup().run({ ...request, model: 'claude-sonnet-4-5', maxTokens: 4096, tools, thinkingBudgetTokens: 2048 });

    const { body } = fake.requests[0];
    expect(body.model).toBe('claude-sonnet-4-5');
    expect(body.max_tokens).toBe(4096);
    expect(body.tools).toStrictEqual(tools);
    expect(body.thinking).toStrictEqual({ type: 'enabled', budget_tokens: 2048 });
  });

  it('omits empty tools and an empty system prompt', async () => {
    fake.enqueue({ content: [text('ok')] });
    await setup().run({ ...request, system: [], tools: [] });
    expect(Object.keys(fake.requests[0].body).sort()).toEqual(['max_tokens', 'messages', 'model', 'stream']);
  });

  it('reassembles tool_use input from partial JSON chunks', async () => {
    const input = {
      query: 'weather in Paris',
      options: { units: 'metric', days: [1, 2, 3] },
      note: 'naïve "quoted" ✓',
    };
    fake.enqueue({ content: [text('Let me check.'), toolUse('lookup', input, 'toolu_01ABC')] });
    const result = await setup().run();

    expect(result.content).toStrictEqual([
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_use', id: 'toolu_01ABC', name: 'lookup', input },
    ]);
    expect(result.stopReason).toBe('tool_use');
  });

  it('gives generated tool ids the Anthropic shape', async () => {
    fake.enqueue({ content: [toolUse('lookup', {})] });
    const result = await setup().run();
    expect(result.content).toStrictEqual([
      { type: 'tool_use', id: expect.stringMatching(/^toolu_01\w{22}$/), name: 'lookup', input: {} },
    ]);
  });

  it('keeps thinking blocks with their signature and redacted thinking as is', async () => {
    fake.enqueue({
      content: [
        { type: 'thinking', thinking: 'The user greets me; answer briefly.', signature: 'EqQBsignature==' },
        { type: 'redacted_thinking', data: 'opaque-redacted-data' },
        text('Hi!'),
      ],
      stopReason: 'end_turn',
    });
    const result = await setup().run({ ...request, thinkingBudgetTokens: 1024 });

    expect(result.content).toStrictEqual([
      { type: 'thinking', thinking: 'The user greets me; answer briefly.', signature: 'EqQBsignature==' },
      { type: 'redacted_thinking', data: 'opaque-redacted-data' },
      { type: 'text', text: 'Hi!' },
    ]);
  });

  it('maps every usage counter', async () => {
    fake.enqueue({
      content: [text('ok')],
      usage: { input_tokens: 123, output_tokens: 45, cache_read_input_tokens: 67, cache_creation_input_tokens: 89 },
      stopReason: 'max_tokens',
    });
    const result = await setup().run();
    expect(result.usage).toStrictEqual({
      inputTokens: 123,
      outputTokens: 45,
      cacheReadInputTokens: 67,
      cacheCreationInputTokens: 89,
    });
    expect(result.stopReason).toBe('max_tokens');
  });
});

describe('callModel deltas', () => {
  it('publishes thinking then text deltas in order, concatenating to the final blocks', async () => {
    const answer = 'The answer, in several pieces, is forty-two.';
    const thinking = 'Six times seven is forty-two.';
    fake.enqueue({ content: [{ type: 'thinking', thinking, signature: 's' }, text(answer)] });
    const { run, deltas } = setup();
    await run();

    const thinkingDeltas = deltas.filter((d) => d.type === 'thinking.delta');
    const textDeltas = deltas.filter((d) => d.type === 'message.delta');
    expect(deltas.every((d) => d.turnId === 'turn-1')).toBe(true);
    expect(thinkingDeltas.length).toBeGreaterThan(1);
    expect(textDeltas.length).toBeGreaterThan(1);
    expect(deltas.slice(0, thinkingDeltas.length)).toStrictEqual(thinkingDeltas);
    expect(thinkingDeltas.map((d) => d.text).join('')).toBe(thinking);
    expect(textDeltas.map((d) => d.text).join('')).toBe(answer);
  });

  it('does not let a throwing or rejecting publishDelta break the call', async () => {
    fake.enqueue({ content: [text('still fine')] }, { content: [text('also fine')] });
    const throwing = setup({
      publishDelta: () => {
        throw new Error('event log down');
      },
    });
    expect((await throwing.run()).content).toStrictEqual([{ type: 'text', text: 'still fine' }]);
    const rejecting = setup({ publishDelta: () => Promise.reject(new Error('event log down')) });
    expect((await rejecting.run()).content).toStrictEqual([{ type: 'text', text: 'also fine' }]);
  });
});

describe('callModel failures', () => {
  const cases: Array<[status: number, errorType: string, failureType: string, nonRetryable: boolean]> = [
    [400, 'invalid_request_error', 'ModelInvalidRequest', true],
    [401, 'authentication_error', 'ModelAuthentication', true],
    [403, 'permission_error', 'ModelAuthentication', true],
    [404, 'not_found_error', 'ModelNotFound', true],
    [413, 'request_too_large', 'ModelInvalidRequest', true],
    [422, 'invalid_request_error', 'ModelInvalidRequest', true],
    [429, 'rate_limit_error', 'ModelTransient', false],
    [500, 'api_error', 'ModelTransient', false],
    [529, 'overloaded_error', 'ModelTransient', false],
  ];

  it.each(cases)('maps HTTP %i %s to %s (nonRetryable %s)', async (status, errorType, failureType, nonRetryable) => {
    fake.enqueue({
      error: {
        status,
        type: errorType,
        message: `the ${status} message`,
        headers: { 'request-id': `req_test${status}` },
      },
    });
    const failure = await failureOf(setup().run());

    expect(failure.type).toBe(failureType);
    expect(failure.nonRetryable).toBe(nonRetryable);
    expect(failure.message).toBe(`Anthropic API ${status} ${errorType}: the ${status} message`);
    expect(failure.details).toStrictEqual([{ status, errorType, requestId: `req_test${status}` }]);
    expect(failure.nextRetryDelay).toBeUndefined();
    expect(fake.requests).toHaveLength(1);
  });

  it('carries the API message of a 401, as the real API words it', async () => {
    fake.enqueue({ error: { status: 401, type: 'authentication_error', message: 'invalid x-api-key' } });
    const failure = await failureOf(setup().run());
    expect(failure.message).toBe('Anthropic API 401 authentication_error: invalid x-api-key');
  });

  it.each([
    ['retry-after', '7', 7_000],
    ['retry-after-ms', '1500', 1_500],
    ['retry-after', '3600', maxRetryAfterMs],
  ])('turns %s: %s into nextRetryDelay %i', async (name, value, expected) => {
    fake.enqueue({
      error: { status: 429, type: 'rate_limit_error', message: 'slow down', headers: { [name]: value } },
    });
    const failure = await failureOf(setup().run());
    expect(failure.type).toBe('ModelTransient');
    expect(failure.nextRetryDelay).toBe(expected);
  });

  it('reads retry-after given as an HTTP date', async () => {
    const inThirtySeconds = new Date(Date.now() + 30_000).toUTCString();
    fake.enqueue({
      error: {
        status: 529,
        type: 'overloaded_error',
        message: 'Overloaded',
        headers: { 'retry-after': inThirtySeconds },
      },
    });
    const failure = await failureOf(setup().run());
    expect(failure.nextRetryDelay).toBeGreaterThan(25_000);
    expect(failure.nextRetryDelay).toBeLessThanOrEqual(30_000);
  });

  it('classifies an overloaded error inside the stream after a 200 as transient, after the partial deltas', async () => {
    fake.enqueue({ streamError: { type: 'overloaded_error', message: 'Overloaded' }, afterText: 'Partial answer' });
    const { run, deltas } = setup();
    const failure = await failureOf(run());

    expect(failure.type).toBe('ModelTransient');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toBe('Anthropic API stream error overloaded_error: Overloaded');
    expect(failure.details).toStrictEqual([
      { status: null, errorType: 'overloaded_error', requestId: expect.stringMatching(/^req_/) },
    ]);
    expect(deltas.map((d) => d.text).join('')).toBe('Partial answer');
  });

  it('classifies an invalid_request_error inside the stream as non-retryable', async () => {
    fake.enqueue({ streamError: { type: 'invalid_request_error', message: 'bad block' } });
    const failure = await failureOf(setup().run());
    expect(failure.type).toBe('ModelInvalidRequest');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toBe('Anthropic API stream error invalid_request_error: bad block');
  });

  it('classifies a refused connection as transient', async () => {
    const closed = await startFakeAnthropic();
    await closed.close();
    const failure = await failureOf(setup({ baseURL: closed.url }).run());
    expect(failure.type).toBe('ModelTransient');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toMatch(/^Anthropic API connection error/);
  });

  it('aborts a stream that stays silent longer than the timeout, as transient', async () => {
    fake.enqueue({ content: [text('too slow')], delayMs: 2_000 });
    const failure = await failureOf(setup({ timeoutMs: 600 }).run());
    expect(failure.type).toBe('ModelTransient');
    expect(failure.message).toBe('Anthropic API stream sent nothing for 600 ms');
    await expect(fake.requests[0].finished).resolves.toBe('aborted');
  });

  it('fails loudly when the test scripted no response', async () => {
    const failure = await failureOf(setup().run());
    expect(failure.message).toMatch(
      /^Anthropic API 500 api_error: fake-anthropic: no scripted response for request #1/,
    );
  });

  it('refuses to run without an API key or base URL', async () => {
    const failure = await failureOf(setup({ apiKey: undefined, baseURL: undefined }).run());
    expect(failure.type).toBe('ModelAuthentication');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toBe('No Anthropic API key configured: set ANTHROPIC_API_KEY.');
    expect(fake.requests).toHaveLength(0);
  });

  it('sends a placeholder key when only a base URL is configured', async () => {
    fake.enqueue({ content: [text('gateway ok')] });
    await setup({ apiKey: undefined }).run();
    expect(fake.requests[0].apiKey).toBe('skillflow-no-api-key');
  });
});

describe('callModel inside Temporal', () => {
  /**
   * The activity's clock (Date) is the test's: it moves only when the test moves it, by `stepMs` on each text delta the
   * activity publishes, so what the throttle sees does not depend on how fast a loaded machine streams. Timers and I/O
   * stay real (a heartbeat check of the activity's interval sees a time some event's own check sees too).
   */
  function steppedClock(stepMs: number): Partial<ModelDeps> {
    jest.useFakeTimers({
      now: 1_000_000,
      doNotFake: [
        'hrtime',
        'nextTick',
        'performance',
        'queueMicrotask',
        'setImmediate',
        'clearImmediate',
        'setInterval',
        'clearInterval',
        'setTimeout',
        'clearTimeout',
      ],
    });
    return { publishDelta: () => jest.setSystemTime(Date.now() + stepMs) };
  }
  afterEach(() => jest.useRealTimers());

  it('sends no heartbeat for a call that ends within the heartbeat throttle interval', async () => {
    fake.enqueue({ content: [text('quick'), text('and done')] });
    const { run, env } = setup(steppedClock(300));
    let heartbeats = 0;
    env.on('heartbeat', () => heartbeats++);
    const startedAt = Date.now();
    await run();

    expect(Date.now() - startedAt).toBe(1_800);
    expect(heartbeats).toBe(0);
  });

  it('heartbeats while a slow stream runs, from the heartbeat throttle interval on', async () => {
    fake.enqueue({ content: [text('slow but'), text(' steady,'), text(' and on')] });
    const { run, env } = setup(steppedClock(300));
    const beats: number[] = [];
    const startedAt = Date.now();
    env.on('heartbeat', () => beats.push(Date.now() - startedAt));
    const result = await run();

    expect(result.content).toStrictEqual([
      { type: 'text', text: 'slow but' },
      { type: 'text', text: ' steady,' },
      { type: 'text', text: ' and on' },
    ]);
    // Nine deltas 300 ms apart by the activity's clock: none before 2 s, then at most one per 500 ms: the delta seen
    // at 2.1 s, and the end of the last block at 2.7 s (the delta at 2.4 s is too soon after).
    expect(Date.now() - startedAt).toBe(2_700);
    expect(heartbeatThrottleMs).toBe(2_000);
    expect(beats).toEqual([2_100, 2_700]);
  });

  it('aborts the HTTP request and rethrows the cancellation when the activity is cancelled mid-stream', async () => {
    fake.enqueue({ content: [text('a long answer that will never finish')], delayMs: 300 });
    const { callModel } = createModelActivities({
      apiKey: 'sk-test-key',
      baseURL: fake.url,
      model: 'claude-test-1',
      maxTokens: 1024,
      timeoutMs: 10_000,
      publishDelta: () => env.cancel(),
    });
    const env = quietEnvironment();
    const err = await env.run(callModel, request).then(
      () => undefined,
      (e: unknown) => e,
    );

    expect(err).toBeInstanceOf(CancelledFailure);
    await expect(fake.requests[0].finished).resolves.toBe('aborted');
  });
});

describe('fake Anthropic server', () => {
  const post = (
    body: Record<string, unknown>,
    headers: Record<string, string> = { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
  ) =>
    fetch(`${fake.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const sseData = (raw: string) =>
    raw
      .split('\n\n')
      .filter((chunk) => chunk.startsWith('event: '))
      .map(
        (chunk) =>
          JSON.parse(chunk.split('\ndata: ')[1]) as { type: string; delta?: { type: string; partial_json?: string } },
      );

  it('streams tool input as several partial JSON chunks', async () => {
    const input = { query: 'weather in Paris', days: [1, 2, 3] };
    fake.enqueue({ content: [toolUse('lookup', input, 'toolu_01X')] });
    const response = await post({ model: 'm', max_tokens: 10, messages: [], stream: true });
    expect(response.headers.get('content-type')).toBe('text/event-stream');

    const events = sseData(await response.text());
    const partials = events.filter((e) => e.delta?.type === 'input_json_delta').map((e) => e.delta?.partial_json);
    expect(partials.length).toBeGreaterThan(1);
    expect(partials.join('')).toBe(JSON.stringify(input));
    expect(events.map((e) => e.type)).toStrictEqual([
      'message_start',
      'ping',
      'content_block_start',
      ...partials.map(() => 'content_block_delta'),
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
  });

  it('answers JSON without stream, from a handler that sees the request', async () => {
    fake.respond((body) => ({ content: [text(`echo ${body.model}`)], stopReason: 'stop_sequence' }));
    const response = await post({ model: 'claude-echo', max_tokens: 10, messages: [] });
    const message = (await response.json()) as Record<string, unknown>;

    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-echo',
      content: [{ type: 'text', text: 'echo claude-echo' }],
      stop_reason: 'stop_sequence',
    });
    expect(message.id).toMatch(/^msg_01[0-9A-Za-z]{22}$/);
    expect(fake.pending).toBe(0);
  });

  it('rejects a request without credentials or anthropic-version like the API does', async () => {
    const noKey = await post({ model: 'm', max_tokens: 1, messages: [] }, { 'anthropic-version': '2023-06-01' });
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    const noVersion = await post({ model: 'm', max_tokens: 1, messages: [] }, { 'x-api-key': 'k' });
    expect(noVersion.status).toBe(400);
    expect(fake.requests.map((r) => [r.apiKey, r.anthropicVersion])).toStrictEqual([
      [undefined, '2023-06-01'],
      ['k', undefined],
    ]);
  });
});

describe('conversation deltas', () => {
  let fake: FakeAnthropic;
  beforeAll(async () => {
    fake = await startFakeAnthropic();
  });
  afterAll(async () => fake.close());

  it('rebuilds the conversation from what the worker holds plus what is new, and asks for it whole when it holds nothing', async () => {
    const { callModel } = createModelActivities({
      apiKey: 'k',
      baseURL: fake.url,
      model: 'm',
      maxTokens: 100,
      timeoutMs: 5_000,
    });
    const env = new MockActivityEnvironment();
    const first: ChatMessage[] = [{ role: 'user', content: 'one' }];
    fake.enqueue({ content: [text('a')] }, { content: [text('b')] });
    await env.run(callModel, { turnId: 'turn-delta-1', system: [], messages: first });
    const append: ChatMessage[] = [
      { role: 'assistant', content: 'a' },
      { role: 'user', content: 'two' },
    ];
    await env.run(callModel, {
      turnId: 'turn-delta-1',
      system: [],
      delta: { baseCount: 1, baseDigest: digestOf(first), append },
    });
    expect(fake.requests[1].body.messages).toEqual([
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'a' },
      { role: 'user', content: [{ type: 'text', text: 'two', cache_control: { type: 'ephemeral' } }] },
    ]);

    // A base that begins the conversation the worker holds (the turn went on from an earlier point) is served from it.
    fake.enqueue({ content: [text('c')] });
    await env.run(callModel, {
      turnId: 'turn-delta-1',
      system: [],
      delta: { baseCount: 1, baseDigest: digestOf(first), append },
    });
    expect(fake.requests[2].body.messages).toEqual(fake.requests[1].body.messages);
    const miss = env.run(callModel, {
      turnId: 'turn-delta-1',
      system: [],
      delta: { baseCount: 1, baseDigest: digestOf([{ role: 'user', content: 'other' }]), append },
    });
    await expect(miss).rejects.toMatchObject({ type: transcriptMissType, nonRetryable: true });
    const unknown = env.run(callModel, {
      turnId: 'turn-never-seen',
      system: [],
      delta: { baseCount: 1, baseDigest: 'x', append },
    });
    await expect(unknown).rejects.toMatchObject({ type: transcriptMissType });
    expect(fake.requests).toHaveLength(3);
  });

  it('holds each response as the turn appends it, so the next delta starts after it, on this worker or any other sharing the store', async () => {
    const store = new FileStore(fs.mkdtempSync(path.join(os.tmpdir(), 'sf-reply-')), 3_600_000);
    const deps = { apiKey: 'k', baseURL: fake.url, model: 'm', maxTokens: 100, timeoutMs: 5_000, store };
    const [here, other] = [createModelActivities(deps), createModelActivities(deps)];
    const env = new MockActivityEnvironment();
    const first: ChatMessage[] = [{ role: 'user', content: 'one' }];
    fake.requests.length = 0;
    fake.enqueue(
      { content: [toolUse('lookup', { q: 'x' }, 'toolu_1')] },
      { content: [text('b')] },
      { content: [text('c')] },
    );
    const response = (await env.run(here.callModel, {
      turnId: 'turn-reply-1',
      system: [],
      messages: first,
    })) as ModelResponse;
    // The turn appends the response as it came (JSON, as it crossed Temporal), then the tool's result.
    const reply = replyMessageOf(JSON.parse(JSON.stringify(response.content)));
    const withReply = [...first, reply];
    const append: ChatMessage[] = [
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'found' }] },
    ];
    const delta = { baseCount: 2, baseDigest: digestOf(withReply), append };
    await env.run(here.callModel, { turnId: 'turn-reply-1', system: [], delta });
    await env.run(other.callModel, { turnId: 'turn-reply-1', system: [], delta });
    const expected = JSON.parse(JSON.stringify([...withReply, ...append]));
    for (const request of fake.requests.slice(1)) {
      const sent = JSON.parse(JSON.stringify(request.body.messages)) as Array<{ content: unknown }>;
      for (const message of sent)
        if (Array.isArray(message.content)) for (const block of message.content) delete block.cache_control;
      expect(sent).toEqual(expected);
    }
    expect(fake.requests).toHaveLength(3);
  });
});
