import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { baselinePatch, impliedByBaseline, separatePatches } from '../workflows/legacy/core/policy';
import { examDecision, examMessage, examModel } from './support/exam-script';
import { text, toolUse } from './support/fake-anthropic';
import { patchesIn, useHandoverStack } from './support/handover';

const { EventType } = temporal.api.enums.v1;

/**
 * The deploy of batched search attributes and the baseline patch (issue 15), in a test: a worker on the frozen bundle
 * of the code before them (test/fixtures/bundles/workflows-8d7c85e.js.gz) starts an exam that waits at exam_params; a
 * worker with the current code takes over. The old exam replays and finishes with the commands its code made: its
 * patch markers one by one, one upsert per attribute change. A turn started afterwards records the baseline only and
 * sends a workflow task's changes as one upsert. Both show operators the right attributes where they wait.
 */
const frozenCommit = '8d7c85e';

describe('handing turns in flight to the code with batched search attributes and one patch marker', () => {
  const stack = useHandoverStack('handover-upserts');

  it('an old exam finishes with its own commands; a new turn records the baseline and upserts once per workflow task', async () => {
    const { env, fake, api } = stack;
    const oldWorker = await stack.startOldWorker(frozenCommit);
    fake.respond(examModel());
    const session = await api.createSession();
    const exam = (await api.sendMessage(session, { message: examMessage(1) })).body.id as string;
    let pending = await api.pending(exam);
    expect(pending.name).toBe('exam_params');

    await stack.deploy(oldWorker);

    const examHandle = env.client.workflow.getHandle(exam);
    for (const next of ['question_1', 'post_exam_routing']) {
      expect((await api.answer(exam, pending.id, examDecision(pending))).code).toBe(200);
      pending = await api.pending(exam, pending.id);
      expect(pending.name).toBe(next);
      if (next === 'question_1')
        expect(await shownAttributes(examHandle)).toEqual({
          status: 'waiting',
          checkpoint: 'question_1',
          step: 'question-generation',
        });
    }
    expect((await api.answer(exam, pending.id, examDecision(pending))).code).toBe(200);
    expect(await api.finished(exam)).toMatchObject({ status: 'completed', output: 'Great work: the exam is done.' });
    // Its markers are its code's (every rule and prompt-by-reference, no baseline); on the new code it still upserts
    // each change apart, as its history before the deploy did (an answer: the name cleared, the step, the status).
    const oldPatches = await patchesIn(examHandle);
    expect(oldPatches).toHaveLength(8);
    expect(oldPatches.every((id) => impliedByBaseline.includes(id))).toBe(true);
    expect(Math.max(...(await upsertsPerTaskAfterDeploy(examHandle)))).toBe(3);
    expect(await shownAttributes(examHandle)).toEqual({
      status: 'completed',
      checkpoint: undefined,
      step: 'checkpoint:post_exam_routing',
    });

    // A turn started now: the baseline marker and the turn start's two, one upsert per workflow task, the same attributes at its wait and its end.
    fake.respond(undefined);
    fake.enqueue(
      {
        content: [
          toolUse('request_human_approval', {
            checkpoint: 'which_topic',
            summary: 'Which topic next?',
            kind: 'question',
          }),
        ],
      },
      { content: [text('Trees, then.')] },
    );
    const fresh = (await api.sendMessage(session, { message: 'What next?' })).body.id as string;
    const freshHandle = env.client.workflow.getHandle(fresh);
    const question = await api.pending(fresh);
    expect(await shownAttributes(freshHandle)).toEqual({
      status: 'waiting',
      checkpoint: 'which_topic',
      step: undefined,
    });
    await api.answer(fresh, question.id, { action: 'answer', answer: 'Trees.' });
    expect(await api.finished(fresh)).toMatchObject({ status: 'completed', output: 'Trees, then.' });
    expect(await shownAttributes(freshHandle)).toEqual({ status: 'completed', checkpoint: undefined, step: undefined });
    expect((await patchesIn(freshHandle)).sort()).toEqual(
      [
        baselinePatch,
        separatePatches.spendingBounds,
        separatePatches.turnStartInOneActivity,
        separatePatches.toolCatalogByReference,
      ].sort(),
    );
    expect(Math.max(...(await upsertsPerTaskAfterDeploy(freshHandle)))).toBe(1);
    expect(fake.pending).toBe(0);
  }, 120_000);
});

/** The turn's status, checkpoint and step search attributes as Temporal describes them (a cleared one: undefined). */
async function shownAttributes(handle: WorkflowHandle) {
  const attributes = (await handle.describe()).searchAttributes;
  const first = (name: string) => (attributes[name] ?? []).find((value) => value !== null) as string | undefined;
  return { status: first('SkillflowStatus'), checkpoint: first('SkillflowCheckpoint'), step: first('SkillflowStep') };
}

/** Skillflow upserts in each workflow task from the turn's first answer on (for the old exam: after the deploy). */
async function upsertsPerTaskAfterDeploy(handle: WorkflowHandle): Promise<number[]> {
  const { events } = await handle.fetchHistory();
  const counts: number[] = [];
  let answered = false;
  for (const event of events ?? []) {
    if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED) answered = true;
    if (!answered) continue;
    if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) counts.push(0);
    const keys = Object.keys(
      event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {},
    );
    if (counts.length > 0 && keys.some((key) => key.startsWith('Skillflow'))) counts[counts.length - 1]++;
  }
  return counts;
}
