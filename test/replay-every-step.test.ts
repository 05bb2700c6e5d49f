import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { PendingCheckpoint } from '../core/checkpoints';
import { answerCheckpointUpdate, turnEventsQuery, turnStateQuery } from '../workflows/definitions';
import { testDeps } from './support/deps';
import { examDecision, examMessage, examModel, examModelCalls, examCheckpoints } from './support/exam-script';
import { startFakeAnthropic, type FakeAnthropic } from './support/fake-anthropic';
import { TemporalTestEnv } from './support/temporal';
import { startTurn } from './support/turns';

const questions = 3;
const { EventType, TaskQueueKind } = temporal.api.enums.v1;

/**
 * A worker that caches no workflow replays the turn's whole history on every workflow task: each model call that
 * returns, each answered checkpoint, each query. A full exam run that way completes exactly as with a cache (every
 * model call once, every checkpoint asked once, the event log without gaps): replay is what every worker restart, every
 * eviction and every other worker taking a turn over does, so any nondeterminism in a path of the exam shows here.
 */
describe('an exam on a worker without a workflow cache', () => {
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let taskQueue: string;

  beforeAll(async () => {
    env = await TemporalTestEnv.connect();
    fake = await startFakeAnthropic();
    fake.respond(examModel());
    taskQueue = env.newTaskQueue('nocache');
    await env.startWorker(taskQueue, testDeps(fake.url), undefined, { overrides: { maxCachedWorkflows: 0 } });
  });
  afterAll(async () => {
    await env?.close();
    await fake?.close();
  });

  it('replays at every step of a full exam, and the exam completes', async () => {
    const handle = await startTurn(env.client, taskQueue, examMessage(questions));
    const asked: string[] = [];
    for (let last: string | undefined; ; ) {
      const pending = await nextCheckpoint(handle, last);
      if (!pending) break;
      await handle.executeUpdate(answerCheckpointUpdate, { args: [{ ...examDecision(pending), checkpointId: pending.id, by: 'tester' }] });
      asked.push(pending.name);
      last = pending.id;
    }
    expect(await handle.result()).toMatchObject({ status: 'completed', output: 'Great work: the exam is done.' });
    expect(asked).toEqual(['exam_params', ...Array.from({ length: questions }, (_, i) => `question_${i + 1}`), 'post_exam_routing']);
    expect(asked).toHaveLength(examCheckpoints(questions));
    expect(fake.requests).toHaveLength(examModelCalls(questions));

    const events = await handle.query(turnEventsQuery, 0);
    expect(events.map((event) => event.offset)).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1)).toMatchObject({ type: 'done' });

    // No workflow task went to a sticky queue: each one ran on a worker that held nothing and replayed from event 1.
    const { events: history } = await handle.fetchHistory();
    const scheduled = (history ?? []).filter((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED);
    expect(scheduled.length).toBeGreaterThan(examModelCalls(questions) + examCheckpoints(questions));
    expect(scheduled.filter((event) => event.workflowTaskScheduledEventAttributes?.taskQueue?.kind === TaskQueueKind.TASK_QUEUE_KIND_STICKY)).toEqual([]);
  });
});

async function nextCheckpoint(handle: WorkflowHandle, after: string | undefined): Promise<PendingCheckpoint | undefined> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const state = await handle.query(turnStateQuery);
    if (state.pendingCheckpoint && state.pendingCheckpoint.id !== after) return state.pendingCheckpoint;
    if (['completed', 'failed', 'cancelled'].includes(state.status)) return undefined;
    if (Date.now() > deadline) throw new Error(`no checkpoint after ${after} within 60 s; the turn is ${state.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
