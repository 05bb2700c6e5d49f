import type { WorkflowHandle } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { baselinePatch, separatePatches } from '../workflows/legacy/core/policy';
import { authHeaders, eventually } from './support/api';
import { text, toolUse, type MessagesRequestBody } from './support/fake-anthropic';
import { patchesIn, useHandoverStack } from './support/handover';
import { workflowTypeClause } from '../workflows/definitions';

/**
 * The deploy of a workflow change, in a test (docs/operators.md, "Changing workflow code"): a worker running the
 * frozen bundle of the code before the policy core (test/fixtures/bundles/workflows-ba8b671.js.gz) starts an exam that
 * waits at a checkpoint and a session left with an unfinished plan; it shuts down; a worker with the current code
 * takes over. The old turn replays and finishes on the rules it started with; turns started afterwards run the new
 * code, patch markers in their histories, and do what the old code could not.
 */
const frozenCommit = 'ba8b671';
const exam = 'exam-mode-tuner';
const loadSkill = (name = exam) => toolUse('load_skill', { name });
const subskill = (name: string) => toolUse('load_subskill', { skill: exam, subskill: name });
const ask = (checkpoint: string, kind: 'approval' | 'question', extra: Record<string, unknown> = {}) =>
  toolUse('request_human_approval', { checkpoint, summary: `About ${checkpoint}`, kind, ...extra });
const examParams = () =>
  ask('exam_params', 'approval', { params: { question_count: 2, time_limit_min: 35, concepts: ['arrays'] } });
const haiku = 'Autumn leaves falling / the pond keeps every secret / a frog breaks the calm';

/** The patch ids a workflow's history records (markers `core_patch`, details `patch-data` = {id, deprecated}). */
/** The input a workflow was started with. */
async function inputOf(handle: WorkflowHandle): Promise<Record<string, unknown>> {
  const history = await handle.fetchHistory();
  const data = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
  return JSON.parse(new TextDecoder().decode(data!));
}

function lastText(body: MessagesRequestBody): string {
  return JSON.stringify(body.messages.at(-1));
}

describe('handing turns in flight from the old workflow code to the new', () => {
  const stack = useHandoverStack('handover');
  let oldWorker: Worker;
  beforeAll(async () => {
    oldWorker = await stack.startOldWorker(frozenCommit);
  });

  it('a turn waiting at a checkpoint and a carried plan survive the deploy; new turns run the new code', async () => {
    const { env, fake, app, api, taskQueue } = stack;
    // The old code: an exam waits at exam_params; another session's exam is cancelled mid-way, leaving its plan.
    fake.enqueue({ content: [loadSkill()] }, { content: [text('Here is the exam I propose.'), examParams()] });
    const waitingSession = await api.createSession();
    const waiting = (await api.sendMessage(waitingSession, { message: 'Give me a practice test on arrays.' })).body.id;
    const params = await api.pending(waiting);

    fake.enqueue(
      { content: [loadSkill()] },
      { content: [examParams()] },
      { content: [subskill('question-generation')] },
      { content: [ask('question_1', 'question')] },
    );
    const carrySession = await api.createSession();
    const interrupted = (await api.sendMessage(carrySession, { message: 'An exam on trees.' })).body.id;
    const carryParams = await api.pending(interrupted);
    await api.answer(interrupted, carryParams.id, { action: 'approve' });
    await api.pending(interrupted, carryParams.id);
    expect(
      (await app.inject({ method: 'POST', url: `/v1/turns/${interrupted}/cancel`, headers: authHeaders() })).statusCode,
    ).toBe(202);
    expect(await api.finished(interrupted)).toMatchObject({
      status: 'cancelled',
      skill: exam,
      step: 'question-generation',
    });
    expect(await patchesIn(env.client.workflow.getHandle(waiting))).toEqual([]);

    // The deploy: the old worker stops, a worker with the current code takes the queue.
    await stack.deploy(oldWorker);

    // The session the old code left with a plan: the old turn handed it over in the old shape; the session (now on the
    // new code) migrates it when it reads it, and the new turn continues the exam.
    const oldCarry = ((await env.client.workflow.getHandle(interrupted).result()) as { plan: Record<string, unknown> })
      .plan;
    expect(Object.keys(oldCarry).sort()).toEqual(['orchestrator', 'snapshots']);
    fake.enqueue(
      { content: [loadSkill()] },
      { content: [subskill('adaptive-difficulty')] },
      { content: [ask('question_2', 'question')] },
    );
    const resumed = (await api.sendMessage(carrySession, { message: 'Continue my exam.' })).body.id;
    await api.pending(resumed);
    const resume = (await inputOf(env.client.workflow.getHandle(resumed))).resume as Record<string, unknown>;
    expect(resume).toMatchObject({
      version: 3,
      plan: { skill: exam, current: 'question-generation' },
      orchestrator: oldCarry.orchestrator,
    });
    // Migrated: the whole snapshot the old code carried serves this turn, and is named for the carry handed on.
    expect(resume).toMatchObject({
      skills: [{ name: exam, hash: expect.stringMatching(/^[0-9a-f]{64}$/) }],
      snapshots: [{ name: exam }],
    });
    expect(JSON.stringify(fake.requests.at(-3)!.body.messages)).toContain(
      'You are in the middle of skill exam-mode-tuner; the last step done was question-generation.',
    );
    expect((await api.turn(resumed)).body).toMatchObject({
      skill: exam,
      step: 'adaptive-difficulty',
      status: 'waiting',
    });
    // Which turns still run the old code: the running ones without the patch or the baseline that implies it
    // (docs/operators.md, "Retiring a patch"); turns of this code record the baseline only.
    const running = `${workflowTypeClause('turn')} AND ExecutionStatus = "Running" AND TaskQueue = "${taskQueue}"`;
    const ids = async (query: string) => {
      const found: string[] = [];
      for await (const execution of env.client.workflow.list({ query })) found.push(execution.workflowId);
      return found.sort();
    };
    await eventually(
      () => ids(`${running} AND TemporalChangeVersion IS NULL`),
      (found) => found.join() === waiting,
      20_000,
    );
    await eventually(
      () => ids(`${running} AND TemporalChangeVersion = "${baselinePatch}"`),
      (found) => found.join() === resumed,
      20_000,
    );
    expect(
      await ids(
        `${running} AND (TemporalChangeVersion IS NULL OR (NOT TemporalChangeVersion = "skill-limits" AND NOT TemporalChangeVersion = "${baselinePatch}"))`,
      ),
    ).toEqual([waiting]);

    // The old turn: answered through the API, it replays on the new code and finishes its exam.
    fake.enqueue(
      { content: [subskill('question-generation')] },
      { content: [ask('question_1', 'question')] },
      { content: [subskill('adaptive-difficulty')] },
      { content: [subskill('performance-analytics')] },
      { content: [text('You scored 100%.'), ask('post_exam_routing', 'approval')] },
      { content: [text('Well done. Come back any time.')] },
    );
    expect((await api.answer(waiting, params.id, { action: 'approve' })).code).toBe(200);
    const question = await api.pending(waiting, params.id);
    await api.answer(waiting, question.id, { action: 'answer', answer: 'A contiguous block.' });
    const route = await api.pending(waiting, question.id);
    expect(route.options).toEqual([
      '→ memory-comprehension-coach (consolidate weak areas)',
      '→ study-guide-creator (full restudy)',
      '→ exam-mode-tuner again (harder test)',
      'Stop here',
    ]);
    await api.answer(waiting, route.id, { action: 'choose', choice: 'Stop here' });
    expect(await api.finished(waiting)).toMatchObject({
      status: 'completed',
      output: 'Well done. Come back any time.',
      skill: exam,
      step: 'checkpoint:post_exam_routing',
    });
    expect(await patchesIn(env.client.workflow.getHandle(waiting))).toEqual([]);

    // A turn started now runs the new code: its history records the patches, and after "Stop here" it may load
    // another skill (the old code refused it for good: the session was locked).
    fake.enqueue({ content: [loadSkill('simple-writing')] }, { content: [text(haiku)] });
    const afterStop = (await api.sendMessage(waitingSession, { message: 'Write me a haiku about autumn.' })).body.id;
    expect(await api.finished(afterStop)).toMatchObject({ status: 'completed', output: haiku });
    expect(lastText(fake.requests.at(-1)!.body)).toContain('Skill simple-writing');
    expect(lastText(fake.requests.at(-1)!.body)).not.toContain('is_error');
    // The old turn handed on its finished plan naming the exam skill (the old rules carry it), which this turn read back
    // (carried-skill-references, implied by its baseline marker), with its catalogs in one activity.
    expect((await patchesIn(env.client.workflow.getHandle(afterStop))).sort()).toEqual(
      [
        baselinePatch,
        separatePatches.spendingBounds,
        separatePatches.turnStartInOneActivity,
        separatePatches.toolCatalogByReference,
      ].sort(),
    );
    const { events } = await env.client.workflow.getHandle(afterStop).fetchHistory();
    const scheduled = events
      ?.map((event) => event.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter(Boolean);
    expect(scheduled?.filter((name) => name === 'readTurnStart')).toHaveLength(1);
    expect(scheduled).not.toContain('resolveSkillSnapshots');

    fake.enqueue({ content: [text('Stopping for today.')] });
    const question2 = await api.pending(resumed);
    expect(question2.name).toBe('question_2');
    await api.answer(resumed, question2.id, { action: 'cancel' });
    expect(await api.finished(resumed)).toMatchObject({ status: 'cancelled', skill: exam });
    expect(fake.pending).toBe(0);
  }, 120_000);
});
