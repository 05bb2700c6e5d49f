import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { startingTurnState } from '../core/turn';
import type { TurnSnapshot } from '../core/turn-snapshot';
import { InProcessChannel } from '../lib/live';
import { aliceKey, authHeaders, bobKey, buildTestApp, eventually } from './support/api';
import { testDeps } from './support/deps';
import { startFakeAnthropic, text, toolUse, type FakeAnthropic } from './support/fake-anthropic';
import { countedClient } from './support/rpc-counter';
import { ApiDriver } from './support/scenario';
import { SseClient, WsClient } from './support/stream-clients';
import { TemporalTestEnv } from './support/temporal';

const ask = (checkpoint: string) =>
  toolUse('request_human_approval', { checkpoint, summary: `Decide ${checkpoint}`, kind: 'approval' });

/** The worker's channel, read by the API: `keep` off hides every kept state from the API (a store that is down or lost it). */
class ApiSideChannel extends InProcessChannel {
  keep = true;
  /** When set, the state the API reads instead of the one kept (a stale one). */
  override?: (turnId: string) => TurnSnapshot | undefined;

  override async latestState(turnId: string): Promise<TurnSnapshot | undefined> {
    if (!this.keep) return undefined;
    return this.override?.(turnId) ?? super.latestState(turnId);
  }

  kept(turnId: string): Promise<TurnSnapshot | undefined> {
    return super.latestState(turnId);
  }
}

/**
 * DescribeWorkflowExecution calls of the API (issue 15): the plain exam flow (send a message, follow the turn's SSE
 * stream, answer each checkpoint as it is asked): an answer takes who may see the turn from the state its worker
 * published, and describes the turn only when no state is kept; the stream's opening describes the turn, which a kept
 * state cannot show exists. The API's client counts its gRPC calls by method.
 */
describe('describes of an exam turn', () => {
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let counted: Awaited<ReturnType<typeof countedClient>>;
  let live: ApiSideChannel;
  let app: FastifyInstance;
  let api: ApiDriver;
  let base: string;

  beforeAll(async () => {
    env = await TemporalTestEnv.connect();
    fake = await startFakeAnthropic();
    live = new ApiSideChannel();
    counted = await countedClient(env.address);
    const taskQueue = env.newTaskQueue('describes');
    await env.startWorker(taskQueue, testDeps(fake.url), (turnId, event) => live.publish(turnId, event), {
      publishState: (turnId, snapshot) => live.publishState(turnId, snapshot),
    });
    // Every describe counted is one a request or the feed's catch-up made, none of its describes after silence.
    ({ app } = await buildTestApp(
      counted.client,
      taskQueue,
      {},
      { live, feedSettings: { describeEveryMs: 600_000, silentReadMs: 600_000 } },
    ));
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    api = new ApiDriver(app);
  });
  afterEach(() => {
    live.keep = true;
    delete live.override;
    fake.respond(undefined);
    expect(fake.pending).toBe(0);
  });
  afterAll(async () => {
    await app?.close();
    await counted?.connection.close();
    await env?.close();
    await fake?.close();
  });

  const describes = () => counted.calls.get('DescribeWorkflowExecution') ?? 0;

  const answer = (
    turnId: string,
    checkpointId: string,
    key = aliceKey,
    idempotencyKey = `answer-${checkpointId}-${turnId}`,
  ) =>
    app.inject({
      method: 'POST',
      url: `/v1/turns/${turnId}/checkpoints/${checkpointId}`,
      headers: { ...authHeaders(key), 'idempotency-key': idempotencyKey },
      payload: { action: 'approve' },
    });

  /**
   * An exam turn as the benchmark's client runs it: checkpoints `a` and `b`, each answered (with an Idempotency-Key)
   * as the stream shows it, then a last model call held until the describes are counted, so that the feed's
   * confirmation of the pushed ending (its own describes) comes after. The describes from the message to the last answer.
   */
  async function describesOfExamTurn(): Promise<number> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    fake.enqueue({ content: [ask('a')] }, { content: [ask('b')] });
    fake.respond(async () => (await held, { content: [text('Done.')] }));
    const sessionId = await api.createSession();
    const before = describes();
    const started = await api.sendMessage(sessionId, { message: 'exam' });
    expect(started.code).toBe(202);
    const turnId: string = started.body.id;
    // The stream opens once the worker published the turn's first state (with `keep` off, the API never sees it).
    await eventually(() => live.kept(turnId), Boolean);
    const stream = await SseClient.open(`${base}/v1/turns/${turnId}/events`, authHeaders());
    try {
      for (const name of ['a', 'b']) {
        const asked = await stream.waitFor(
          (event) => event.type === 'checkpoint.requested' && event.checkpoint.name === name,
        );
        expect((await answer(turnId, asked.checkpoint.id)).statusCode).toBe(200);
      }
      const used = describes() - before;
      release();
      await stream.ended;
      expect(stream.events.at(-1)).toMatchObject({ type: 'done', output: 'Done.' });
      return used;
    } finally {
      release();
      stream.close();
    }
  }

  it('from the message to the last answer: one for the session, two for the stream, the feed catch-up and one per answer', async () => {
    // The session's describe before the turn starts, the stream's check of the turn and its session, the feed's describe
    // before its catch-up read, and each answer's check of the session: none of the turn's own (8 before: two per answer).
    expect(await describesOfExamTurn()).toBe(6);
  });

  it('describes the turn as before when no published state is kept (Redis down, or the state expired)', async () => {
    live.keep = false;
    expect(await describesOfExamTurn()).toBe(8);
  });

  it('answers from a stale published state as before: 409 for a turn that ended, 404 for another user or a deleted session', async () => {
    fake.enqueue({ content: [ask('go')] }, { content: [text('Gone.')] });
    const turnId = await api.startTurn('stale');
    const checkpoint = await api.pending(turnId);
    const waiting = await live.kept(turnId);
    expect(waiting?.state.status).toBe('waiting');

    // Another user: 404 from the published owner, and the checkpoint stays pending.
    const foreign = await answer(turnId, checkpoint.id, bobKey);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error.code).toBe('not_found');
    expect((await api.turn(turnId)).body.pendingCheckpoint?.id).toBe(checkpoint.id);

    expect((await answer(turnId, checkpoint.id)).statusCode).toBe(200);
    await api.finished(turnId);
    // The state the API reads still shows the checkpoint pending: the update is refused, and describe explains it.
    live.override = (id) => (id === turnId ? waiting : undefined);
    const late = await answer(turnId, checkpoint.id, aliceKey, 'another-key');
    expect(late.statusCode).toBe(409);
    expect(late.json().error.code).toBe('checkpoint_not_pending');

    expect(
      (await app.inject({ method: 'DELETE', url: `/v1/sessions/${waiting!.state.sessionId}`, headers: authHeaders() }))
        .statusCode,
    ).toBe(204);
    const deleted = await answer(turnId, checkpoint.id, aliceKey, 'a-third-key');
    expect(deleted.statusCode).toBe(404);
    await expect(SseClient.open(`${base}/v1/turns/${turnId}/events`, authHeaders())).rejects.toMatchObject({
      status: 404,
    });
  });

  it('opens no stream from a kept state of a turn that does not exist (an earlier session of the same id): 404 as before', async () => {
    // A session deleted and created again with the same Idempotency-Key has the same id, and its turns' ids come round
    // again; a turn the delete had to terminate left its last state (not ended) kept for 24 h.
    const sessionId = await api.createSession();
    const turnId = `turn-${sessionId}-1`;
    const at = new Date().toISOString();
    live.override = (id) =>
      id === turnId
        ? {
            offset: 4,
            state: {
              ...startingTurnState({ turnId, sessionId, userId: 'alice', createdAt: at, updatedAt: at }),
              status: 'waiting',
            },
          }
        : undefined;
    await expect(SseClient.open(`${base}/v1/turns/${turnId}/events`, authHeaders())).rejects.toMatchObject({
      status: 404,
    });
    await expect(
      WsClient.open(`${base.replace('http', 'ws')}/v1/turns/${turnId}/ws`, authHeaders()),
    ).rejects.toMatchObject({ status: 404 });
    const answered = await answer(turnId, 'cp-1');
    expect(answered.statusCode).toBe(404);
  });
});
