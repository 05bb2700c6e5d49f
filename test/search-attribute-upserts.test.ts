import { randomBytes } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { TurnInput, TurnState } from '../core/turn';
import { answerCheckpointUpdate, turnEventsQuery, turnStateQuery, workflowTypes } from '../workflows/definitions';
import { searchAttributeNameOf } from '../core/search-attributes';
import { searchAttributes } from '../workflows/search-attributes';
import type { turnWorkflow } from '../workflows/turn';
import { skillsWithChecker } from './support/checker-skill';
import { examDecision, examMessage, examModel, examModelCalls, examSkill } from './support/exam-script';
import { text, toolUse, type ScriptedMessage } from './support/fake-anthropic';
import { patchesIn } from './support/handover';
import { useWorkerHarness } from './support/harness';
import { fastSettings, nextCheckpoint } from './support/turns';

const { EventType } = temporal.api.enums.v1;
const questions = 2;

/**
 * Issue 15: every UpsertWorkflowSearchAttributes event is a visibility write on the Temporal server. A turn merges the
 * search attribute changes of one workflow task into one upsert (not one per change: a checkpoint opening changes its
 * name and the status, its answer the name, the step and the status), and records one patch marker (Core adds a
 * TemporalChangeVersion upsert to each) instead of one per rule. What operators see is unchanged: at every point
 * where the turn waits (a model call, a checkpoint, its end) its search attributes say what its state says.
 */
describe('a turn upserts its search attributes once per workflow task', () => {
  const harness = useWorkerHarness('upserts', { skillsDir: () => skillsWithChecker('sf-upserts-skills-') });

  it(`an exam of ${questions} questions: four patch markers, at most one upsert per workflow task, the attributes its state shows at every wait`, async () => {
    const { env, fake, taskQueue } = harness;
    const sessionId = randomBytes(10).toString('hex');
    const handle = env.client.workflow.getHandle<typeof turnWorkflow>(`turn-${sessionId}-1`);
    const seen: Observation[] = [];
    const exam = examModel();
    fake.respond(async (body, request) => {
      seen.push(await observe(handle, `model call ${seen.filter((o) => o.at.startsWith('model')).length + 1}`));
      return exam(body, request);
    });
    await startTurnAsSession(env.client, taskQueue, sessionId, examMessage(questions));
    for (let pending = await nextCheckpoint(handle); pending; pending = await nextCheckpoint(handle, pending.id)) {
      seen.push(await observe(handle, `checkpoint ${pending.name}`));
      await handle.executeUpdate(answerCheckpointUpdate.name, {
        args: [{ ...examDecision(pending), checkpointId: pending.id, by: 'tester' }],
      });
    }
    expect(await handle.result()).toMatchObject({ status: 'completed' });
    seen.push(await observe(handle, 'ended'));

    // Operators see what the turn's state says, at each wait: running during model calls, waiting at checkpoints.
    expect(seen.map((o) => ({ at: o.at, ...o.attributes }))).toEqual(seen.map((o) => ({ at: o.at, ...o.expected })));
    expect(seen.filter((o) => o.at.startsWith('model'))).toHaveLength(examModelCalls(questions));
    expect(seen.find((o) => o.at === 'checkpoint question_1')?.attributes).toEqual({
      SkillflowStatus: ['waiting'],
      SkillflowCheckpoint: ['question_1'],
      SkillflowSkill: [examSkill],
      SkillflowStep: ['question-generation'],
    });
    expect(seen.at(-1)?.attributes).toEqual({
      SkillflowStatus: ['completed'],
      SkillflowSkill: [examSkill],
      SkillflowStep: ['checkpoint:post_exam_routing'],
    });

    // Code before batched search attributes made 8 patch markers, each with its TemporalChangeVersion upsert, and 23
    // upserts of Skillflow attributes, up to 3 in one workflow task; the legacy code 4 markers (baseline-2026-11 and
    // its turn's own). The current code: no marker, no TemporalChangeVersion upsert.
    expect(await upsertCounts(handle)).toEqual({
      patchMarkers: 0,
      changeVersionUpserts: 0,
      attributeUpserts: 13,
      mostInOneTask: 1,
    });
  });

  it('a checkpoint inside a skill run: the run and its turn show it while it waits and not after; one upsert per workflow task each', async () => {
    const { env, fake, taskQueue } = harness;
    const sessionId = randomBytes(10).toString('hex');
    const handle = env.client.workflow.getHandle<typeof turnWorkflow>(`turn-${sessionId}-1`);
    const script: ScriptedMessage[] = [
      { content: [toolUse('invoke_skill', { skill: 'checker', task: 'Confirm the claim.', params: { claim: 'x' } })] },
      {
        content: [
          toolUse('request_human_approval', {
            checkpoint: 'confirm',
            summary: 'Confirm x?',
            kind: 'approval',
            params: { claim: 'x' },
          }),
        ],
      },
      { content: [text('The human confirmed x.')] },
      { content: [text('x is confirmed.')] },
    ];
    const seen: Observation[] = [];
    const observeBoth = async (at: string) => {
      seen.push(await observe(handle, `${at}: turn`));
      const child = (await handle.query(turnStateQuery)).skills?.[0]?.workflowId;
      if (child) seen.push(await observe(env.client.workflow.getHandle(child), `${at}: skill run`, 'checker'));
    };
    fake.respond(async () => {
      await observeBoth(`model call ${5 - script.length}`);
      return script.shift()!;
    });
    await startTurnAsSession(env.client, taskQueue, sessionId, 'check x');
    const pending = await nextCheckpoint(handle);
    expect(pending).toMatchObject({ name: 'confirm', skill: 'checker', depth: 1 });
    await observeBoth('checkpoint confirm');
    await handle.executeUpdate(answerCheckpointUpdate.name, {
      args: [{ checkpointId: pending!.id, action: 'approve', by: 'tester' }],
    });
    expect(await handle.result()).toMatchObject({ status: 'completed', output: 'x is confirmed.' });
    await observeBoth('ended');

    expect(seen.map((o) => ({ at: o.at, ...o.attributes }))).toEqual(seen.map((o) => ({ at: o.at, ...o.expected })));
    expect(
      seen
        .filter((o) => o.at === 'checkpoint confirm: turn' || o.at === 'checkpoint confirm: skill run')
        .map((o) => o.attributes),
    ).toEqual([
      { SkillflowStatus: ['waiting'], SkillflowCheckpoint: ['confirm'] },
      { SkillflowStatus: ['waiting'], SkillflowCheckpoint: ['confirm'], SkillflowSkill: ['checker'] },
    ]);
    expect(seen.filter((o) => o.at.startsWith('ended')).map((o) => o.attributes.SkillflowStatus)).toEqual([
      ['completed'],
      ['completed'],
    ]);
    const child = (await handle.query(turnStateQuery)).skills![0].workflowId;
    expect(await upsertCounts(handle)).toMatchObject({ patchMarkers: 0, changeVersionUpserts: 0, mostInOneTask: 1 });
    expect(await upsertCounts(env.client.workflow.getHandle(child))).toMatchObject({
      patchMarkers: 0,
      changeVersionUpserts: 0,
      mostInOneTask: 1,
    });
  });

  it.each([
    [
      'its own checkpoint',
      [
        {
          content: [
            toolUse('request_human_approval', { checkpoint: 'confirm', summary: 'Confirm x?', kind: 'approval' }),
          ],
        },
      ],
    ],
    [
      'a checkpoint of a skill run below',
      [
        {
          content: [toolUse('invoke_skill', { skill: 'checker', task: 'Confirm the claim.', params: { claim: 'x' } })],
        },
        {
          content: [
            toolUse('request_human_approval', {
              checkpoint: 'confirm',
              summary: 'Confirm x?',
              kind: 'approval',
              params: { claim: 'x' },
            }),
          ],
        },
      ],
    ],
  ] as Array<[string, ScriptedMessage[]]>)(
    'a turn cancelled while it waits at %s ends showing no checkpoint, in its state or its search attributes',
    async (_, script) => {
      const { env, fake, taskQueue } = harness;
      const sessionId = randomBytes(10).toString('hex');
      const handle = env.client.workflow.getHandle<typeof turnWorkflow>(`turn-${sessionId}-1`);
      fake.enqueue(...script);
      await startTurnAsSession(env.client, taskQueue, sessionId, 'check x');
      expect(await nextCheckpoint(handle)).toMatchObject({ name: 'confirm' });
      expect((await observe(handle, 'waiting')).attributes).toMatchObject({
        SkillflowStatus: ['waiting'],
        SkillflowCheckpoint: ['confirm'],
      });
      await handle.cancel();
      expect(await handle.result()).toMatchObject({ status: 'cancelled' });
      const ended = await observe(handle, 'ended');
      expect((await handle.query(turnStateQuery)).pendingCheckpoint).toBeNull();
      expect(ended.attributes).not.toHaveProperty('SkillflowCheckpoint');
      expect(ended.attributes).toMatchObject({ SkillflowStatus: ['cancelled'] });
      // The skill run, cancelled with its turn, ends showing no checkpoint either. Runs of the current code record no
      // patch marker (the version boundary: the changes these once needed patches for are simply its code).
      const skillRuns = (await handle.query(turnStateQuery)).skills ?? [];
      expect(skillRuns).toHaveLength(script.length - 1);
      expect(await patchesIn(handle)).toEqual([]);
      expect(await upsertCounts(handle)).toMatchObject({ patchMarkers: 0, mostInOneTask: 1 });
      for (const { workflowId } of skillRuns) {
        const run = env.client.workflow.getHandle(workflowId);
        await run.result().catch(() => undefined);
        expect((await run.query(turnStateQuery)).pendingCheckpoint).toBeNull();
        expect((await observe(run, 'skill run ended')).attributes).not.toHaveProperty('SkillflowCheckpoint');
        expect(await patchesIn(run)).toEqual([]);
        expect(await upsertCounts(run)).toMatchObject({ patchMarkers: 0, mostInOneTask: 1 });
      }
    },
  );

  it("a turn cancelled while it shows a skill run's checkpoint goes from waiting to cancelled: no running between, no model call after the cancel", async () => {
    const { env, fake, taskQueue } = harness;
    const sessionId = randomBytes(10).toString('hex');
    const handle = env.client.workflow.getHandle<typeof turnWorkflow>(`turn-${sessionId}-1`);
    fake.enqueue(
      { content: [toolUse('invoke_skill', { skill: 'checker', task: 'Confirm the claim.', params: { claim: 'x' } })] },
      {
        content: [
          toolUse('request_human_approval', {
            checkpoint: 'confirm',
            summary: 'Confirm x?',
            kind: 'approval',
            params: { claim: 'x' },
          }),
        ],
      },
    );
    await startTurnAsSession(env.client, taskQueue, sessionId, 'check x');
    expect(await nextCheckpoint(handle)).toMatchObject({ name: 'confirm', skill: 'checker', depth: 1 });
    const before = await handle.query(turnStateQuery);
    expect(before.status).toBe('waiting');
    const requestsBefore = fake.requests.length;
    const { events: historyBefore } = await handle.fetchHistory();
    const cancelledFrom = historyBefore?.length ?? 0;
    await handle.cancel();
    expect(await handle.result()).toMatchObject({
      status: 'cancelled',
      reason: 'cancelled',
      skills: [{ skill: 'checker', status: 'cancelled' }],
    });

    // No model round after the cancel: the fake saw no request, the turn counted no call.
    expect(fake.requests.length).toBe(requestsBefore);
    const after = await handle.query(turnStateQuery);
    expect(after).toMatchObject({ status: 'cancelled', pendingCheckpoint: null, modelCalls: before.modelCalls });
    // Its stream: waiting, then cancelled; never running again once it waited.
    const statuses = (await handle.query(turnEventsQuery, 0))
      .filter((e) => e.type === 'status')
      .map((e) => (e as { status: string }).status);
    expect(statuses.slice(statuses.indexOf('waiting'))).toEqual(['waiting', 'cancelled']);
    // Its search attributes: every SkillflowStatus upsert after the cancel request says cancelled.
    const { events } = await handle.fetchHistory();
    const statusUpserts = (events ?? []).slice(cancelledFrom).flatMap((event) => {
      const field =
        event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.SkillflowStatus;
      return field?.data ? [JSON.parse(Buffer.from(field.data).toString())] : [];
    });
    expect(statusUpserts).toEqual(['cancelled']);
    expect((await handle.describe()).searchAttributes).toMatchObject({ SkillflowStatus: ['cancelled'] });
  });
});

interface Observation {
  at: string;
  /** The turn's Skillflow search attributes as Temporal describes them (mutable state, not the visibility store). */
  attributes: Record<string, unknown>;
  /** The same attributes as the turn's state says they should be. */
  expected: Record<string, unknown>;
}

const shown = ['status', 'checkpoint', 'skill', 'step'] as const;

/** `startedAs`: the skill a skill run was started with (its SkillflowSkill until a plan of its own says otherwise). */
async function observe(handle: WorkflowHandle, at: string, startedAs?: string): Promise<Observation> {
  const state: TurnState = await handle.query(turnStateQuery);
  const described = (await handle.describe()).searchAttributes;
  const attributes: Record<string, unknown> = {};
  // A cleared attribute reads as [null]: empty, as operators see it.
  for (const role of shown) {
    const values = (described[searchAttributeNameOf[role]] ?? []).filter((value) => value !== null);
    if (values.length > 0) attributes[searchAttributeNameOf[role]] = values;
  }
  const values = {
    status: state.status,
    checkpoint: state.pendingCheckpoint?.name ?? null,
    skill: state.skill ?? startedAs,
    step: state.step,
  };
  const expected: Record<string, unknown> = {};
  for (const role of shown) if (values[role]) expected[searchAttributeNameOf[role]] = [values[role]];
  return { at, attributes, expected };
}

/** The turn's patch markers and upserts (Core's TemporalChangeVersion ones apart), and the most Skillflow upserts in one workflow task. */
async function upsertCounts(handle: WorkflowHandle) {
  const { events } = await handle.fetchHistory();
  const counts = { patchMarkers: 0, changeVersionUpserts: 0, attributeUpserts: 0, mostInOneTask: 0 };
  let inTask = 0;
  for (const event of events ?? []) {
    if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) inTask = 0;
    if (event.eventType === EventType.EVENT_TYPE_MARKER_RECORDED) counts.patchMarkers++;
    if (event.eventType !== EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES) continue;
    const keys = Object.keys(
      event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {},
    );
    if (keys.includes('TemporalChangeVersion')) counts.changeVersionUpserts++;
    if (keys.some((key) => key.startsWith('Skillflow'))) {
      counts.attributeUpserts++;
      counts.mostInOneTask = Math.max(counts.mostInOneTask, ++inTask);
    }
  }
  return counts;
}

/** Starts a turn as its session does: with the session's, the user's and the running status's search attributes. */
async function startTurnAsSession(client: Client, taskQueue: string, sessionId: string, message: string) {
  const input: TurnInput = {
    turnId: `turn-${sessionId}-1`,
    sessionId,
    userId: 'tester',
    message,
    history: [],
    createdAt: new Date().toISOString(),
    settings: fastSettings,
  };
  return client.workflow.start<typeof turnWorkflow>(workflowTypes.turn, {
    workflowId: input.turnId,
    taskQueue,
    args: [input],
    typedSearchAttributes: [
      { key: searchAttributes.session, value: sessionId },
      { key: searchAttributes.user, value: 'tester' },
      { key: searchAttributes.status, value: 'running' },
    ],
  });
}
