import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { temporal } from '@temporalio/proto';
import { InProcessChannel, RedisChannel, type LiveChannel } from '../lib/live';
import { turnStateQuery } from '../workflows/definitions';
import { buildTestApp, eventually } from './support/api';
import { testDeps } from './support/deps';
import { startFakeAnthropic, toolUse, type FakeAnthropic } from './support/fake-anthropic';
import { ApiDriver } from './support/scenario';
import { requireRedis, testRedisUrl, uniqueRedisPrefix } from './support/services';
import { TemporalTestEnv } from './support/temporal';

const { EventType, ResetReapplyExcludeType } = temporal.api.enums.v1;

const ask = (summary: string) => toolUse('request_human_approval', { checkpoint: 'go', summary, kind: 'approval' });

/**
 * A turn reset in the Temporal UI (`temporal workflow reset`) goes on in a new run of the same workflow id, whose log
 * starts again from the reset point, at offsets the old run already wrote. The state the new run publishes must replace
 * the old run's, so that GET /v1/turns/:id shows the new run's pending checkpoint, not one the old run was waiting at.
 */
describe.each<[string, () => Promise<{ worker: LiveChannel; api: LiveChannel }>]>([
  [
    'Redis',
    async () => {
      await requireRedis();
      const prefix = uniqueRedisPrefix('reset');
      return {
        worker: new RedisChannel(testRedisUrl(), { prefix }),
        api: new RedisChannel(testRedisUrl(), { prefix }),
      };
    },
  ],
  [
    'in process',
    async () => {
      const channel = new InProcessChannel();
      return { worker: channel, api: channel };
    },
  ],
])("a reset turn's published state (%s)", (_name, channels) => {
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let live: { worker: LiveChannel; api: LiveChannel };
  let app: FastifyInstance;
  let api: ApiDriver;

  beforeAll(async () => {
    live = await channels();
    env = await TemporalTestEnv.connect();
    fake = await startFakeAnthropic();
    const taskQueue = env.newTaskQueue('reset-state');
    await env.startWorker(taskQueue, testDeps(fake.url), (turnId, event) => live.worker.publish(turnId, event), {
      publishState: (turnId, snapshot) => live.worker.publishState(turnId, snapshot),
    });
    ({ app } = await buildTestApp(env.client, taskQueue, {}, { live: live.api }));
    api = new ApiDriver(app);
  });
  afterAll(async () => {
    await app?.close();
    await env?.close();
    await fake?.close();
    await live?.worker.close();
    if (live?.api !== live?.worker) await live?.api.close();
  });

  const kept = (turnId: string, checkpointId: string) =>
    eventually(
      () => live.api.latestState(turnId),
      (snapshot) => snapshot?.state.pendingCheckpoint?.id === checkpointId,
      10_000,
    );

  it("replaces the old run's state kept at a later offset: GET shows the new run's checkpoint", async () => {
    fake.enqueue({ content: [ask('first')] }, { content: [ask('second')] });
    const turnId = await api.startTurn('reset me');
    const first = await api.pending(turnId);
    expect((await api.answer(turnId, first.id, { action: 'approve' })).code).toBe(200);
    await api.pending(turnId, first.id);
    const old = await kept(turnId, 'cp-2');

    // Back to the turn's first workflow task, without the answer: the new run asks the model again, and waits at its
    // first checkpoint, at an earlier offset of its log than the old run's second one.
    const handle = env.client.workflow.getHandle(turnId);
    const { events } = await handle.fetchHistory();
    const firstTask = events!.find((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)!;
    fake.enqueue({ content: [ask('after the reset')] });
    const { runId } = await env.client.workflowService.resetWorkflowExecution({
      namespace: 'default',
      workflowExecution: { workflowId: turnId },
      reason: 'test: a turn reset by an operator',
      workflowTaskFinishEventId: firstTask.eventId,
      requestId: randomUUID(),
      resetReapplyExcludeTypes: [
        ResetReapplyExcludeType.RESET_REAPPLY_EXCLUDE_TYPE_SIGNAL,
        ResetReapplyExcludeType.RESET_REAPPLY_EXCLUDE_TYPE_UPDATE,
      ],
    });
    const current = await eventually(
      () => handle.query(turnStateQuery).catch(() => undefined),
      (state) => state?.pendingCheckpoint?.summary === 'after the reset',
      20_000,
    );
    expect(current!.pendingCheckpoint!.id).toBe('cp-1');

    // The old run's state agrees with what describe says (waiting at `go`), yet shows the checkpoint it waited at.
    const view = await api.waitFor(turnId, (turn) => turn.pendingCheckpoint?.summary === 'after the reset', 10_000);
    expect(view).toMatchObject({ status: 'waiting', pendingCheckpoint: { id: 'cp-1' } });
    const latest = await kept(turnId, 'cp-1');
    expect(latest!.offset).toBeLessThan(old!.offset);
    expect(latest!.runId).toBe(runId);

    // A late write of the old run (its worker had not seen the reset) is kept, being another run's, but never shown:
    // it agrees with the search attributes (waiting at `go`), and only its run tells it from the new run's.
    live.worker.publishState(turnId, old!);
    await kept(turnId, 'cp-2');
    expect(await api.turn(turnId)).toMatchObject({
      code: 200,
      body: { status: 'waiting', pendingCheckpoint: { id: 'cp-1', summary: 'after the reset' } },
    });
  });
});
