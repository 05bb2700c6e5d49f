import type { FastifyInstance } from 'fastify';
import { buildTestApp, authHeaders, bobKey, eventually } from './support/api';
import { text, type FakeAnthropic } from './support/fake-anthropic';
import { useWorkerHarness } from './support/harness';

describe('a chat turn end to end: API, real Temporal, real SDK over HTTP to the fake model', () => {
  const harness = useWorkerHarness('foundation');
  let fake: FakeAnthropic;
  let app: FastifyInstance;

  beforeAll(async () => {
    fake = harness.fake;
    ({ app } = await buildTestApp(harness.env.client, harness.taskQueue));
  });
  harness.closeFirst(async () => app?.close());

  const readTurn = async (id: string, key?: string) => {
    const response = await app.inject({ method: 'GET', url: `/v1/turns/${id}`, headers: authHeaders(key) });
    return { code: response.statusCode, body: response.json() };
  };

  it('creates a session, runs a turn through the model, and serves its output', async () => {
    fake.enqueue({ content: [text('Hello from the fake model.')] });

    const created = await app.inject({ method: 'POST', url: '/v1/sessions', headers: authHeaders() });
    expect(created.statusCode).toBe(201);
    const sessionId = created.json().id as string;
    expect(sessionId).toMatch(/^[a-z0-9]{20}$/);

    const started = await app.inject({
      method: 'POST',
      url: `/v1/sessions/${sessionId}/turns`,
      headers: authHeaders(),
      payload: { message: 'Hi there' },
    });
    expect(started.statusCode).toBe(202);
    const turn = started.json();
    expect(turn).toEqual({ id: `turn-${sessionId}-1`, sessionId, status: 'running' });

    const done = await eventually(
      () => readTurn(turn.id),
      (view) => view.body.status === 'completed',
    );
    expect(done.code).toBe(200);
    expect(done.body).toMatchObject({
      id: turn.id,
      sessionId,
      workflowId: turn.id,
      status: 'completed',
      output: 'Hello from the fake model.',
      error: null,
    });
    expect(done.body.usage.outputTokens).toBeGreaterThan(0);

    const request = fake.requests.at(-1)!;
    expect(request.body.model).toBe('claude-test');
    expect(request.body.stream).toBe(true);
    expect(request.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Hi there', cache_control: { type: 'ephemeral' } }] },
    ]);
  });

  it('carries the text of earlier turns into the next one', async () => {
    fake.enqueue({ content: [text('First answer.')] }, { content: [text('Second answer.')] });
    const sessionId = (await app.inject({ method: 'POST', url: '/v1/sessions', headers: authHeaders() })).json().id;
    const first = (
      await app.inject({
        method: 'POST',
        url: `/v1/sessions/${sessionId}/turns`,
        headers: authHeaders(),
        payload: { message: 'one' },
      })
    ).json();
    await eventually(
      () => readTurn(first.id),
      (view) => view.body.status === 'completed',
    );
    const second = (
      await app.inject({
        method: 'POST',
        url: `/v1/sessions/${sessionId}/turns`,
        headers: authHeaders(),
        payload: { message: 'two' },
      })
    ).json();
    expect(second.id).toBe(`turn-${sessionId}-2`);
    const done = await eventually(
      () => readTurn(second.id),
      (view) => view.body.status === 'completed',
    );
    expect(done.body.output).toBe('Second answer.');
    expect(fake.requests.at(-1)!.body.messages).toEqual([
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'First answer.' },
      { role: 'user', content: [{ type: 'text', text: 'two', cache_control: { type: 'ephemeral' } }] },
    ]);
  });

  it('fails the turn with the API message when the model rejects the key', async () => {
    fake.enqueue({ error: { status: 401, type: 'authentication_error', message: 'invalid x-api-key' } });
    const sessionId = (await app.inject({ method: 'POST', url: '/v1/sessions', headers: authHeaders() })).json().id;
    const turn = (
      await app.inject({
        method: 'POST',
        url: `/v1/sessions/${sessionId}/turns`,
        headers: authHeaders(),
        payload: { message: 'hi' },
      })
    ).json();
    const failed = await eventually(
      () => readTurn(turn.id),
      (view) => view.body.status === 'failed',
    );
    expect(failed.body.error.message).toContain('invalid x-api-key');
    expect(failed.body.output).toBeNull();
  });

  it("answers 404 for unknown sessions and turns, and for another user's turn", async () => {
    fake.enqueue({ content: [text('ok')] });
    const missing = await app.inject({
      method: 'POST',
      url: '/v1/sessions/0123456789abcdef0123/turns',
      headers: authHeaders(),
      payload: { message: 'x' },
    });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({
      error: {
        code: 'not_found',
        message: 'Session 0123456789abcdef0123 was not found.',
        requestId: missing.headers['x-request-id'],
      },
    });
    expect((await readTurn('turn-0123456789abcdef0123-1')).code).toBe(404);

    const sessionId = (await app.inject({ method: 'POST', url: '/v1/sessions', headers: authHeaders() })).json().id;
    const turn = (
      await app.inject({
        method: 'POST',
        url: `/v1/sessions/${sessionId}/turns`,
        headers: authHeaders(),
        payload: { message: 'mine' },
      })
    ).json();
    await eventually(
      () => readTurn(turn.id),
      (view) => view.body.status === 'completed',
    );
    expect((await readTurn(turn.id, bobKey)).code).toBe(404);
    const bobPost = await app.inject({
      method: 'POST',
      url: `/v1/sessions/${sessionId}/turns`,
      headers: authHeaders(bobKey),
      payload: { message: 'x' },
    });
    expect(bobPost.statusCode).toBe(404);
  });

  it('rejects a malformed body with 400 in the one error shape', async () => {
    const sessionId = (await app.inject({ method: 'POST', url: '/v1/sessions', headers: authHeaders() })).json().id;
    const response = await app.inject({
      method: 'POST',
      url: `/v1/sessions/${sessionId}/turns`,
      headers: authHeaders(),
      payload: { text: 'wrong field' },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.code).toBe('invalid_request');
  });

  it('serves /healthz without a key and refuses the API without one', async () => {
    expect((await app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    const denied = await app.inject({ method: 'POST', url: '/v1/sessions' });
    expect(denied.statusCode).toBe(401);
    expect(denied.json().error.code).toBe('unauthorized');
  });
});
