import { temporal } from '@temporalio/proto';
import { legacyWorkflowTypes, moveToCurrentSignal } from '../workflows/definitions';
import { movePatch } from '../workflows/legacy/move';
import { examDecision, examMessage, examModel } from './support/exam-script';
import { patchesIn, useHandoverStack } from './support/handover';

const { EventType } = temporal.api.enums.v1;

/**
 * A rolling deploy across the boundary: a worker of code before the boundary (the frozen bundle of 8d7c85e, which
 * registers the legacy names) receives a move signal, ignores it and goes on; the worker with the boundary's code then
 * replays that history. It must go on as it ran: the move handler of workflows/legacy/move.ts is not registered yet,
 * and once it is, its patch (`move-to-current`) finds no marker in such a history and does nothing (without the patch,
 * this test failed with a nondeterminism error, TMPRL1100, when the handler was registered).
 */
describe('a move signal that a worker without the handler received', () => {
  const stack = useHandoverStack('legacy-move-replay');

  it('is nothing when the legacy code replays it: the exam finishes on turnWorkflow, no task fails', async () => {
    const { env, fake, api } = stack;
    const oldWorker = await stack.startOldWorker('8d7c85e');
    fake.respond(examModel());
    const session = await api.createSession();
    const exam = (await api.sendMessage(session, { message: examMessage(1) })).body.id as string;
    let pending = await api.pending(exam);
    expect(pending.name).toBe('exam_params');
    const handle = env.client.workflow.getHandle(exam);
    await handle.signal(moveToCurrentSignal, { by: 'ops-early' });
    expect((await api.answer(exam, pending.id, examDecision(pending))).code).toBe(200);
    pending = await api.pending(exam, pending.id);
    expect(pending.name).toBe('question_1');

    await stack.deploy(oldWorker);

    for (const next of ['post_exam_routing', undefined]) {
      expect((await api.answer(exam, pending.id, examDecision(pending))).code).toBe(200);
      if (next) pending = await api.pending(exam, pending.id);
    }
    expect(await api.finished(exam)).toMatchObject({ status: 'completed' });
    const events = (await handle.fetchHistory()).events ?? [];
    const types = events.map((event) => event.eventType);
    expect(types).toContain(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
    expect(types).not.toContain(EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED);
    expect(types).not.toContain(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW);
    expect(types.at(-1)).toBe(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
    expect(await patchesIn(handle)).not.toContain(movePatch);
    expect((await handle.describe()).type).toBe(legacyWorkflowTypes.turn);
  });
});
