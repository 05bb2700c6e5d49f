import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import type { FastifyInstance } from 'fastify';
import type { PendingCheckpoint } from '../core/checkpoints';
import { workflowInterceptorModules, workflowsPath } from '../worker/create-worker';
import { authHeaders, buildTestApp, eventually } from './support/api';
import { testDeps } from './support/deps';
import { failedCheckpointName, failSessionSignal, releaseSignal } from './support/fail-checkpoint-task';
import { sessionWorkflowId } from '../core/turn';
import {
  startFakeAnthropic,
  text,
  toolUse,
  type FakeAnthropic,
  type MessagesRequestBody,
  type ScriptedResponse,
} from './support/fake-anthropic';
import { useWorkerHarness } from './support/harness';
import { ApiDriver } from './support/scenario';
import { TemporalTestEnv } from './support/temporal';

const EventType = temporal.api.enums.v1.EventType;
const quiet = { log() {}, info() {}, warn() {}, error: console.error, debug() {}, trace() {} };

/** The parsed tool results of the last message of a model request. */
function toolResults(body: MessagesRequestBody): unknown[] {
  const last = body.messages[body.messages.length - 1] as { content: Array<Record<string, unknown>> };
  return last.content
    .filter((block) => block.type === 'tool_result')
    .map((block) => JSON.parse(block.content as string));
}

/**
 * A worker pushes a turn's events when the activation ends, before Temporal has recorded its workflow task. When that
 * task fails (or times out) the server runs it again from history, and the retry brings in ONE activation the model's
 * response that opens the checkpoint and the answer the client gave to the checkpoint it was shown; the SDK runs update
 * validators before it resolves the activity. The answer must still be taken, not refused with 404.
 */
describe('an answer to a checkpoint pushed from a workflow task that then failed', () => {
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let app: FastifyInstance;
  let api: ApiDriver;
  let onCheckpointPushed: ((checkpoint: PendingCheckpoint) => void) | undefined;

  beforeAll(async () => {
    // This file's own bundle: the product's workflows and interceptors, and the test's one that fails the task.
    const bundle = await bundleWorkflowCode({
      workflowsPath,
      workflowInterceptorModules: [
        ...workflowInterceptorModules(false),
        require.resolve('./support/fail-checkpoint-task'),
      ],
      logger: quiet,
    });
    const bundlePath = path.join(
      fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-answer-race-')),
      'workflow-bundle.js',
    );
    fs.writeFileSync(bundlePath, bundle.code);

    env = await TemporalTestEnv.connect();
    fake = await startFakeAnthropic();
    const taskQueue = env.newTaskQueue('answer-race');
    const publishLive = (
      _turnId: string,
      event: { type: string; event?: { type: string; checkpoint?: PendingCheckpoint } },
    ) => {
      if (event.type === 'log.event' && event.event?.type === 'checkpoint.requested')
        onCheckpointPushed?.(event.event.checkpoint!);
    };
    await env.startWorker(taskQueue, testDeps(fake.url), publishLive, { workflowBundlePath: bundlePath });
    ({ app } = await buildTestApp(env.client, taskQueue));
    api = new ApiDriver(app);
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await env?.close();
    await fake?.close();
  });

  it('is taken once the task runs again with the model response and the answer together, and the turn goes on', async () => {
    fake.enqueue(
      {
        content: [
          toolUse('request_human_approval', {
            checkpoint: failedCheckpointName,
            summary: 'Go ahead?',
            kind: 'approval',
          }),
        ],
      },
      { content: [text('Going ahead.')] },
    );
    const pushed = new Promise<PendingCheckpoint>((resolve) => (onCheckpointPushed = resolve));
    const turnId = await api.startTurn('race me');

    // The client answers the checkpoint it was shown, as soon as it was shown.
    const seen = await pushed;
    expect(seen).toMatchObject({ id: 'cp-1', name: failedCheckpointName });
    const answered = await api.answer(turnId, seen.id, { action: 'approve' });
    expect(answered).toEqual({ code: 200, body: { checkpointId: 'cp-1', action: 'approve', by: 'alice' } });

    const done = await api.finished(turnId, 30_000);
    expect(done).toMatchObject({ status: 'completed', output: 'Going ahead.', pendingCheckpoint: null });
    expect(toolResults(fake.requests[1].body)).toEqual([{ approved: true }]);
    expect(fake.pending).toBe(0);

    // The race did happen: a failed task, then the answer accepted in the task that opened the checkpoint.
    const history = await env.client.workflow.getHandle(turnId).fetchHistory();
    const types = history.events!.map((event) => event.eventType);
    const failed = types.indexOf(EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED);
    expect(failed).toBeGreaterThan(0);
    expect(types.indexOf(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED)).toBeGreaterThan(failed);
    // And the turn's history replays on the product's workflow code.
    await Worker.runReplayHistory(
      {
        workflowBundle: { codePath: process.env.SKILLFLOW_TEST_WORKFLOW_BUNDLE! },
        sinks: { live: { logAppended: { fn: () => undefined }, eventLogged: { fn: () => undefined } } },
      },
      history,
      turnId,
    );
  }, 90_000);

  it('is answered 503 with retry-after, not 500, while Temporal refuses updates to a turn whose task keeps failing; a retry with the same key is taken once', async () => {
    fake.enqueue(
      {
        content: [
          toolUse('request_human_approval', { checkpoint: failedCheckpointName, summary: 'Stuck?', kind: 'approval' }),
        ],
      },
      { content: [text('Unstuck.')] },
    );
    const pushed = new Promise<PendingCheckpoint>((resolve) => (onCheckpointPushed = resolve));
    const turnId = await api.startTurn('stuck task');
    const seen = await pushed;
    const handle = env.client.workflow.getHandle(turnId);

    // The client waits before answering; meanwhile the task that opened the checkpoint failed (attempt 1), failed again
    // and timed out (attempt 2): from attempt 3 on, Temporal refuses every update to the workflow at once.
    const attempt = async () => {
      const described = await env.client.workflowService.describeWorkflowExecution({
        namespace: 'default',
        execution: { workflowId: turnId },
      });
      return described.pendingWorkflowTask?.attempt ?? 0;
    };
    await eventually(attempt, (n) => n >= 3, 40_000);
    const answer = () =>
      app.inject({
        method: 'POST',
        url: `/v1/turns/${turnId}/checkpoints/${seen.id}`,
        headers: { ...authHeaders(), 'idempotency-key': 'stuck-1' },
        payload: { action: 'approve' },
      });

    const refused = await answer();
    expect({ code: refused.statusCode, error: refused.json().error.code }).toEqual({ code: 503, error: 'busy' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);

    // The task goes through (here: the test lets it), and the same request again is taken, once.
    await handle.signal(releaseSignal);
    await eventually(attempt, (n) => n === 0, 40_000);
    const retried = await answer();
    expect({ code: retried.statusCode, body: retried.json() }).toEqual({
      code: 200,
      body: { checkpointId: seen.id, action: 'approve', by: 'alice' },
    });
    expect(await api.finished(turnId, 30_000)).toMatchObject({ status: 'completed', output: 'Unstuck.' });
    expect(toolResults(fake.requests[fake.requests.length - 1].body)).toEqual([{ approved: true }]);
    const accepted = (await handle.fetchHistory()).events!.filter(
      (event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED,
    );
    expect(accepted).toHaveLength(1);
  }, 90_000);

  it('a turn start is answered 503 with retry-after, not 500, while Temporal refuses updates to its session; the same request later starts one turn', async () => {
    fake.enqueue({ content: [text('Started at last.')] });
    const sessionId = await api.createSession();
    const session = env.client.workflow.getHandle(sessionWorkflowId(sessionId));
    const attempt = async () => {
      const described = await env.client.workflowService.describeWorkflowExecution({
        namespace: 'default',
        execution: { workflowId: session.workflowId },
      });
      return described.pendingWorkflowTask?.attempt ?? 0;
    };
    await session.signal(failSessionSignal);
    await eventually(attempt, (n) => n >= 3, 40_000);
    const start = () =>
      app.inject({
        method: 'POST',
        url: `/v1/sessions/${sessionId}/turns`,
        headers: { ...authHeaders(), 'idempotency-key': 'start-1' },
        payload: { message: 'hello' },
      });

    const refused = await start();
    expect({ code: refused.statusCode, error: refused.json().error.code }).toEqual({ code: 503, error: 'busy' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);

    await session.signal(releaseSignal);
    await eventually(attempt, (n) => n === 0, 40_000);
    const started = await start();
    expect(started.statusCode).toBe(202);
    expect(await api.finished(started.json().id, 30_000)).toMatchObject({
      status: 'completed',
      output: 'Started at last.',
    });
    expect((await start()).json().id).toBe(started.json().id);
  }, 90_000);
});

/**
 * The other side of that allowance: an answer for the checkpoint the turn numbers next, sent while the turn waits for
 * the model, waits only for the workflow task that took it. The checkpoint the model's response opens later is one the
 * client was not shown, so the answer is refused and that checkpoint stays pending.
 */
describe('an answer ahead of a checkpoint the turn opens only in a later workflow task', () => {
  const harness = useWorkerHarness('answer-ahead');
  let app: FastifyInstance;
  let api: ApiDriver;

  beforeAll(async () => {
    ({ app } = await buildTestApp(harness.env.client, harness.taskQueue));
    api = new ApiDriver(app);
  });
  harness.closeFirst(async () => app?.close());

  /**
   * A turn whose first model call (it opens cp-1, named `later`) waits until `release`; returns once the model was
   * called, with `accepted`: whether an update was accepted in the turn's history.
   */
  async function turnWaitingForModel(message: string) {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let modelCalled!: () => void;
    const called = new Promise<void>((resolve) => (modelCalled = resolve));
    const replies: ScriptedResponse[] = [
      { content: [toolUse('request_human_approval', { checkpoint: 'later', summary: 'Go ahead?', kind: 'approval' })] },
      { content: [text('Done.')] },
    ];
    harness.fake.respond(async () => {
      if (replies.length === 2) {
        modelCalled();
        await released;
      }
      return replies.shift()!;
    });
    const turnId = await api.startTurn(message);
    await called;
    const handle = harness.env.client.workflow.getHandle(turnId);
    const accepted = async () =>
      (await handle.fetchHistory()).events!.some(
        (event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED,
      );
    return { turnId, release, replies, accepted };
  }

  const wentOn = {
    code: 409,
    body: {
      error: {
        code: 'checkpoint_not_pending',
        message: 'Checkpoint cp-1 cannot be answered: the turn went on without opening it.',
      },
    },
  };

  it('is refused with 409 when the model answers, and the checkpoint then opened waits for its own answer', async () => {
    const { turnId, release, replies, accepted } = await turnWaitingForModel('wait for it');
    const early = api.answer(turnId, 'cp-1', { action: 'approve' });
    // The turn let the answer in to wait before the model answers: its update is accepted in the history.
    await eventually(accepted, Boolean);
    release();
    expect(await early).toMatchObject(wentOn);

    expect(await api.pending(turnId)).toMatchObject({ id: 'cp-1', name: 'later' });
    expect(await api.answer(turnId, 'cp-1', { action: 'approve' })).toMatchObject({
      code: 200,
      body: { checkpointId: 'cp-1', action: 'approve' },
    });
    expect(await api.finished(turnId)).toMatchObject({ status: 'completed', output: 'Done.', pendingCheckpoint: null });
    expect(toolResults(harness.fake.requests[1].body)).toEqual([{ approved: true }]);
    expect(replies).toHaveLength(0);
  });

  it('with an Idempotency-Key, its refusal is the outcome a retry gets, also once the checkpoint is pending; a new key answers it', async () => {
    const { turnId, release, replies, accepted } = await turnWaitingForModel('retry me');
    const answer = async (key: string) => {
      const response = await app.inject({
        method: 'POST',
        url: `/v1/turns/${turnId}/checkpoints/cp-1`,
        headers: { ...authHeaders(), 'idempotency-key': key },
        payload: { action: 'approve' },
      });
      return { code: response.statusCode, body: response.json() };
    };
    const early = answer('first-try');
    await eventually(accepted, Boolean);
    release();
    expect(await early).toMatchObject(wentOn);
    expect(await api.pending(turnId)).toMatchObject({ id: 'cp-1', name: 'later' });

    // The update with that id was accepted and failed: Temporal answers its id with that outcome (docs/api.md).
    expect(await answer('first-try')).toMatchObject(wentOn);
    expect(await answer('second-try')).toMatchObject({ code: 200, body: { checkpointId: 'cp-1', action: 'approve' } });
    expect(await api.finished(turnId)).toMatchObject({ status: 'completed', output: 'Done.', pendingCheckpoint: null });
    expect(replies).toHaveLength(0);
  });
});
