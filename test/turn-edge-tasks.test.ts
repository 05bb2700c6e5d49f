import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { defaultTurnSettings } from '../core/settings';
import { sessionStateQuery, startTurnUpdate, workflowTypes } from '../workflows/definitions';
import type { sessionWorkflow } from '../workflows/session';
import type { StartTurnRequest } from '../workflows/session-types';
import { examMessage, examModel, examModelCalls, examCheckpoints } from './support/exam-script';
import { text, toolUse } from './support/fake-anthropic';
import { useWorkerHarness } from './support/harness';
import { answerExam, answerNext, nextCheckpoint, resultOf } from './support/turns';

const EventType = temporal.api.enums.v1.EventType;
const givenSkill = 'simple-writing';

/**
 * What a turn costs Temporal at its start and its end, in workflow tasks (issue 15: each one is a poll, a record, a
 * completion on the server and an activation on the worker). A turn reads what it starts with (the skill catalog, the
 * tool catalog, the skill it was given, the skills of a carried plan) in one activity: one workflow task for all of it
 * after the first. In the middle, one task per model call, per skill the model loads and per answered checkpoint; at
 * the end one more, when the session has the turn's ending (the turnEnded signal, delivered before the turn closes).
 * Its session: its start, the update that starts the turn, the turn started, the signal, the turn closed; fewer when
 * two of those reach it while one task waits to run.
 */
describe('workflow tasks at the start and the end of a turn', () => {
  const harness = useWorkerHarness('turn-edges');

  async function newSession(): Promise<WorkflowHandle<typeof sessionWorkflow>> {
    const sessionId = `edges${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    return harness.env.client.workflow.start<typeof sessionWorkflow>(workflowTypes.session, {
      workflowId: `session-${sessionId}`,
      taskQueue: harness.taskQueue,
      args: [
        {
          sessionId,
          userId: 'tester',
          createdAt: new Date().toISOString(),
          settings: { ...defaultTurnSettings, modelRetryInitialMs: 100 },
        },
      ],
    });
  }

  /** One turn in a fresh session (or `session`), driven to its end; then the workflow tasks of the turn and of its session. */
  async function oneTurn(
    request: StartTurnRequest,
    drive: (turn: WorkflowHandle) => Promise<unknown> = async () => undefined,
    session?: WorkflowHandle,
  ) {
    session ??= await newSession();
    const { turnId } = await session.executeUpdate(startTurnUpdate, { args: [request] });
    const turn = harness.env.client.workflow.getHandle(turnId);
    await drive(turn);
    const result = await resultOf(turn);
    await sessionSettled(session, turnId);
    const tasks = { turn: await workflowTasks(turn), session: await workflowTasks(session) };
    const activities = await activityTypes(turn);
    await session.terminate('turn-edges test done');
    return { result, tasks, activities };
  }

  it('a plain answer: the turn takes 4 workflow tasks, its session at most 5', async () => {
    harness.fake.enqueue({ content: [text('Hello.')] });
    const { result, tasks, activities } = await oneTurn({ message: 'hi' });
    expect(result).toMatchObject({ status: 'completed', output: 'Hello.' });
    expect(activities).toEqual(['readTurnStart', 'callModel']);
    expect(tasks.turn).toBe(4);
    expect(tasks.session).toBeLessThanOrEqual(5);
  });

  it('an exam: one task to read its start, one per model call, skill load and answered checkpoint, one to end', async () => {
    const questions = 2;
    harness.fake.respond(examModel());
    const { result, tasks, activities } = await oneTurn({ message: examMessage(questions) }, answerExam);
    expect(result).toMatchObject({ status: 'completed', output: 'Great work: the exam is done.' });
    expect(activities.slice(0, 3)).toEqual(['readTurnStart', 'callModel', 'loadSkillSnapshot']);
    expect(activities.filter((type) => type !== 'callModel')).toEqual(['readTurnStart', 'loadSkillSnapshot']);
    const skillLoads = 1;
    expect(tasks.turn).toBe(2 + examModelCalls(questions) + skillLoads + examCheckpoints(questions) + 1);
    expect(tasks.session).toBeLessThanOrEqual(5);
  });

  it('a turn given a skill loads it with the catalogs, in the same workflow task', async () => {
    harness.fake.enqueue({
      content: [text('Autumn leaves falling / quietly the pond listens / a frog breaks the calm')],
    });
    const { result, tasks, activities } = await oneTurn({
      message: 'Write me a haiku about autumn.',
      skill: givenSkill,
    });
    expect(activities).toEqual(['readTurnStart', 'callModel']);
    expect(result).toMatchObject({ status: 'completed' });
    expect(JSON.stringify(harness.fake.requests[0].body.messages)).toContain(
      `The skill ${givenSkill} is loaded for this turn`,
    );
    expect(tasks.turn).toBe(4);
    expect(tasks.session).toBeLessThanOrEqual(5);
  });

  it('a turn continuing a carried plan reads its pinned skill back with the catalogs', async () => {
    const session = await newSession();
    const exam = 'exam-mode-tuner';
    const ask = (checkpoint: string, extra: Record<string, unknown> = {}) =>
      toolUse('request_human_approval', {
        checkpoint,
        summary: `About ${checkpoint}`,
        kind: checkpoint === 'exam_params' ? 'approval' : 'question',
        ...extra,
      });
    const params = { question_count: 5, time_limit_min: 35, concepts: ['graphs'] };
    harness.fake.enqueue(
      { content: [toolUse('load_skill', { name: exam })] },
      { content: [ask('exam_params', { params })] },
      { content: [toolUse('load_subskill', { skill: exam, subskill: 'question-generation' })] },
      { content: [ask('question_1')] },
    );
    const { turnId: first } = await session.executeUpdate(startTurnUpdate, {
      args: [{ message: 'An exam on graphs.' }],
    });
    const interrupted = harness.env.client.workflow.getHandle(first);
    const approved = await answerNext(interrupted, { action: 'approve' });
    await nextCheckpoint(interrupted, approved.id);
    await interrupted.cancel();
    expect(await resultOf(interrupted)).toMatchObject({ status: 'cancelled', skill: exam });
    await sessionSettled(session, first);

    // The next turn continues the plan: its pinned exam skill is read back at the start, so load_skill needs no activity.
    harness.fake.enqueue(
      { content: [toolUse('load_skill', { name: exam })] },
      { content: [text('Question 1 again.'), ask('question_1')] },
    );
    const cancelAtQuestion = async (turn: WorkflowHandle) => {
      await nextCheckpoint(turn);
      await turn.cancel();
    };
    const { result, tasks, activities } = await oneTurn({ message: 'Go on with my exam.' }, cancelAtQuestion, session);
    expect(result).toMatchObject({ status: 'cancelled', skill: exam });
    expect(activities).toEqual(['readTurnStart', 'callModel', 'callModel']);
    // Its start, its start read, two model calls, the cancel, the ending delivered to the session.
    expect(tasks.turn).toBe(6);
  });
});

async function workflowTasks(handle: WorkflowHandle): Promise<number> {
  const { events } = await handle.fetchHistory();
  return (events ?? []).filter((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED).length;
}

async function activityTypes(handle: WorkflowHandle): Promise<string[]> {
  const { events } = await handle.fetchHistory();
  return (events ?? []).flatMap((event) =>
    event.activityTaskScheduledEventAttributes
      ? [event.activityTaskScheduledEventAttributes.activityType?.name ?? '']
      : [],
  );
}

/** Waits until the session has recorded the turn's end and has no workflow task left to run. */
async function sessionSettled(session: WorkflowHandle, turnId: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const state = await session.query(sessionStateQuery);
    const ended = state.turns.find((turn) => turn.id === turnId)?.endedAt && !state.activeTurnId;
    const { events } = await session.fetchHistory();
    const closed = (events ?? []).some(
      (event) =>
        event.eventType === EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED ||
        event.eventType === EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED,
    );
    if (ended && closed && events?.at(-1)?.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) return;
    if (Date.now() > deadline) throw new Error(`the session never settled after ${turnId}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
