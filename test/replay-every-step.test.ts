import { temporal } from '@temporalio/proto';
import { turnEventsQuery } from '../workflows/definitions';
import { examMessage, examModel, examModelCalls, examCheckpoints } from './support/exam-script';
import { useWorkerHarness } from './support/harness';
import { answerExam, startTurn } from './support/turns';

const questions = 3;
const { EventType, TaskQueueKind } = temporal.api.enums.v1;

/**
 * A worker that caches no workflow replays the turn's whole history on every workflow task: each model call that
 * returns, each answered checkpoint, each query. A full exam run that way completes exactly as with a cache (every
 * model call once, every checkpoint asked once, the event log without gaps): replay is what every worker restart, every
 * eviction and every other worker taking a turn over does, so any nondeterminism in a path of the exam shows here.
 */
describe('an exam on a worker without a workflow cache', () => {
  const harness = useWorkerHarness('nocache', { worker: () => ({ overrides: { maxCachedWorkflows: 0 } }) });

  it('replays at every step of a full exam, and the exam completes', async () => {
    const { env, fake, taskQueue } = harness;
    fake.respond(examModel());
    const handle = await startTurn(env.client, taskQueue, examMessage(questions));
    const asked = (await answerExam(handle)).map((checkpoint) => checkpoint.name);
    expect(await handle.result()).toMatchObject({ status: 'completed', output: 'Great work: the exam is done.' });
    expect(asked).toEqual([
      'exam_params',
      ...Array.from({ length: questions }, (_, i) => `question_${i + 1}`),
      'post_exam_routing',
    ]);
    expect(asked).toHaveLength(examCheckpoints(questions));
    expect(fake.requests).toHaveLength(examModelCalls(questions));

    const events = await handle.query(turnEventsQuery, 0);
    expect(events.map((event) => event.offset)).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1)).toMatchObject({ type: 'done' });

    // No workflow task went to a sticky queue: each one ran on a worker that held nothing and replayed from event 1.
    const { events: history } = await handle.fetchHistory();
    const scheduled = (history ?? []).filter(
      (event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
    );
    expect(scheduled.length).toBeGreaterThan(examModelCalls(questions) + examCheckpoints(questions));
    expect(
      scheduled.filter(
        (event) => event.workflowTaskScheduledEventAttributes?.taskQueue?.kind === TaskQueueKind.TASK_QUEUE_KIND_STICKY,
      ),
    ).toEqual([]);
  });
});
