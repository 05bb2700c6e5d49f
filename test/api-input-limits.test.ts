import type { AddressInfo } from 'node:net';
import { PayloadConverterError } from '@temporalio/common';
import type { FastifyInstance } from 'fastify';
import { errorReply } from '../api/errors';
import { checkedAnswer, checkedMessage, checkedParams, normalizeText } from '../api/input-limits';
import { loadConfig } from '../lib/config';
import { aliceKey, authHeaders, buildTestApp } from './support/api';
import { text, toolUse } from './support/fake-anthropic';
import { useWorkerHarness } from './support/harness';
import { ApiDriver } from './support/scenario';
import { WsClient } from './support/stream-clients';

const question = (checkpoint: string) =>
  toolUse('request_human_approval', { checkpoint, summary: `Answer ${checkpoint}`, kind: 'question' });

/** Issue 13.12: what a client sends is bounded and cleaned before Temporal or the model sees it. */
describe('input limits', () => {
  const harness = useWorkerHarness('inputs');
  let app: FastifyInstance;
  let api: ApiDriver;
  beforeAll(async () => {
    ({ app } = await buildTestApp(harness.env.client, harness.taskQueue, { SKILLFLOW_MAX_MESSAGE_CHARS: '200' }));
    api = new ApiDriver(app);
  });
  harness.closeFirst(async () => app?.close());

  const everythingSentToTheModel = () => JSON.stringify(harness.fake.requests.map((request) => request.body.messages));

  async function waitingAtQuestion(name: string) {
    harness.fake.enqueue({ content: [question(name)] });
    const turnId = await api.startTurn('ask me');
    await api.pending(turnId);
    return turnId;
  }

  async function finish(turnId: string) {
    harness.fake.enqueue({ content: [text('thanks')] });
    expect((await api.answer(turnId, 'cp-1', { action: 'answer', answer: 'fine' })).code).toBe(200);
    await api.finished(turnId);
  }

  it('a message loses NUL, other controls and bidirectional overrides; a lone surrogate becomes U+FFFD', async () => {
    harness.fake.enqueue({ content: [text('ok')] });
    const turnId = await api.startTurn('hi\u0000 there \u202Eevil\u202C\u2066 \ud800 tab\tand\nline');
    await api.finished(turnId);
    const sent = everythingSentToTheModel();
    expect(sent).toContain(JSON.stringify('hi there evil \ufffd tab\tand\nline').slice(1, -1));
    for (const bad of ['\\u0000', '\\u202e', '\\u2066', '\\ud800']) expect(sent.toLowerCase()).not.toContain(bad);
  });

  it("a typed start's params lose them too: every string and every key, at every depth", async () => {
    // The exam's plan asks for more than a reply; whatever the turn becomes, its first request shows the params.
    harness.fake.respond(() => ({ content: [text('ok')] }));
    const params = { 'top\u202Eic': 'gra\u0000phs\u2066', concepts: ['b\u202Efs', 'd\ud800fs'] };
    const turnId = await api.startTurn('An exam, please.', { skill: 'exam-mode-tuner', params });
    await api.finished(turnId);
    const sent = everythingSentToTheModel();
    expect(sent).toContain(
      JSON.stringify('The user gave these parameters for it: {"topic":"graphs","concepts":["bfs","d\ufffdfs"]}').slice(
        1,
        -1,
      ),
    );
    for (const bad of ['\\u0000', '\\u202e', '\\u2066', '\\ud800']) expect(sent.toLowerCase()).not.toContain(bad);
    const deep = checkedParams({ a: [{ 'k\u202E': ['\u2067x\u0007'] }] });
    expect(deep).toEqual({ a: [{ k: ['x'] }] });
    expect(() => checkedParams(JSON.parse(`{"a":${'['.repeat(20)}${']'.repeat(20)}}`))).toThrow(
      expect.objectContaining({
        statusCode: 400,
        message: expect.stringMatching(/^params nest deeper than 16 levels/),
      }),
    );
  });

  it('the message limit counts the message as normalized; one of only controls is refused', async () => {
    const sessionId = await api.createSession();
    expect(await api.sendMessage(sessionId, { message: 'x'.repeat(201) })).toMatchObject({
      code: 400,
      body: { error: { code: 'message_too_long' } },
    });
    expect(await api.sendMessage(sessionId, { message: '\u0000\u202E' })).toMatchObject({
      code: 400,
      body: { error: { code: 'invalid_request' } },
    });
  });

  it('a checkpoint answer is bounded like a message, and cleaned like one', async () => {
    const turnId = await waitingAtQuestion('free_text');
    const tooLong = await api.answer(turnId, 'cp-1', { action: 'answer', answer: 'y'.repeat(201) });
    expect(tooLong).toMatchObject({
      code: 400,
      body: { error: { code: 'answer_too_long', message: 'answer is 201 characters; the limit is 200.' } },
    });
    expect((await api.turn(turnId)).body).toMatchObject({ status: 'waiting', pendingCheckpoint: { id: 'cp-1' } });
    harness.fake.enqueue({ content: [text('noted')] });
    expect((await api.answer(turnId, 'cp-1', { action: 'answer', answer: 'a\u0000b\u202Ec \udc00' })).code).toBe(200);
    await api.finished(turnId);
    const sent = everythingSentToTheModel();
    expect(sent).toContain('abc \ufffd');
    expect(sent.toLowerCase()).not.toContain('\\u202e');
  });

  it('choice, overrides and note are bounded: too long, too large, too deep are 400s and the checkpoint stays pending', async () => {
    const turnId = await waitingAtQuestion('bounded');
    const expect400 = async (body: Record<string, unknown> | string, message: RegExp) => {
      const response = await app.inject({
        method: 'POST',
        url: `/v1/turns/${turnId}/checkpoints/cp-1`,
        headers: { ...authHeaders(), 'content-type': 'application/json' },
        payload: typeof body === 'string' ? body : JSON.stringify(body),
      });
      expect({ code: response.statusCode, error: response.json().error?.code }).toEqual({
        code: 400,
        error: 'invalid_request',
      });
      expect(response.json().error.message).toMatch(message);
    };
    // 5,000 levels: more than JSON.stringify manages here, so written out as text.
    const deep = `{"action":"modify","overrides":${'{"nested":'.repeat(5_000)}1${'}'.repeat(5_000)}}`;
    await expect400(deep, /overrides nest deeper than 16 levels/);
    await expect400(
      { action: 'modify', overrides: { big: 'z'.repeat(70 * 1024) } },
      /overrides are \d+ bytes as JSON; the limit is 65536/,
    );
    await expect400({ action: 'choose', choice: 'c'.repeat(1_001) }, /choice is 1001 characters; the limit is 1000/);
    await expect400({ action: 'modify', note: 'n'.repeat(4_001) }, /note/);
    expect((await api.turn(turnId)).body).toMatchObject({ status: 'waiting', pendingCheckpoint: { id: 'cp-1' } });
    await finish(turnId);
  });

  it('the WebSocket applies the same bounds', async () => {
    const turnId = await waitingAtQuestion('over_the_socket');
    await app.listen({ port: 0, host: '127.0.0.1' });
    const socket = await WsClient.open(
      `ws://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1/turns/${turnId}/ws`,
      authHeaders(aliceKey),
    );
    await socket.waitForEvent((event) => event.type === 'checkpoint.requested');
    socket.send({
      type: 'checkpoint',
      requestId: 'long',
      checkpointId: 'cp-1',
      action: 'answer',
      answer: 'w'.repeat(201),
    });
    expect(await socket.waitForReply('long')).toMatchObject({
      type: 'error',
      status: 400,
      error: { code: 'answer_too_long' },
    });
    socket.close();
    await finish(turnId);
  });

  it('a message and an answer are bounded in bytes too (SKILLFLOW_MAX_MESSAGE_BYTES), with a clear 400', () => {
    const limits = { maxMessageChars: 1_000, maxMessageBytes: 300 };
    // 101 characters of three bytes each: within the characters, beyond the bytes.
    expect(() => checkedMessage('€'.repeat(101), limits)).toThrow(
      expect.objectContaining({
        statusCode: 400,
        code: 'message_too_long',
        message: 'message is 303 bytes as UTF-8; the limit is 300 bytes (SKILLFLOW_MAX_MESSAGE_BYTES).',
      }),
    );
    expect(checkedMessage('€'.repeat(100), limits)).toBe('€'.repeat(100));
    expect(() => checkedAnswer({ action: 'answer', answer: '😀'.repeat(76) }, limits)).toThrow(
      expect.objectContaining({ statusCode: 400, code: 'answer_too_long' }),
    );
    expect(loadConfig({}).maxMessageBytes).toBe(256 * 1024);
    expect(loadConfig({}).historyWindowBytes).toBe(256 * 1024);
    expect(() => loadConfig({ SKILLFLOW_HISTORY_WINDOW_BYTES: String(1024 * 1024) })).toThrow(
      /SKILLFLOW_HISTORY_WINDOW_BYTES/,
    );
  });

  it("a value the payload converter refuses is the client's 400, not a 500", () => {
    expect(errorReply(new PayloadConverterError('Unable to convert'))).toMatchObject({
      status: 400,
      body: { error: { code: 'invalid_request' } },
      unexpected: false,
    });
  });

  it('normalizeText keeps what is text: emoji (surrogate pairs), tabs, line breaks, right-to-left marks', () => {
    expect(normalizeText('😀\t\r\n\u200Fשלום')).toBe('😀\t\r\n\u200Fשלום');
  });
});
