import fs from 'node:fs';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import type { TurnEvent } from '../core/events';
import { searchAttributeNameOf } from '../core/search-attributes';
import { turnEventsQuery, turnStateQuery } from '../workflows/definitions';
import { skillsWithChecker } from './support/checker-skill';
import { toolUse, type ScriptedMessage } from './support/fake-anthropic';
import { useWorkerHarness } from './support/harness';
import { nextCheckpoint, startTurn } from './support/turns';

const { EventType } = temporal.api.enums.v1;
const quietSinks = {
  live: {
    logAppended: { fn: () => undefined, callDuringReplay: false },
    eventLogged: { fn: () => undefined, callDuringReplay: false },
  },
};

/**
 * A turn cancelled while a skill call of it runs (the skill run waiting at its checkpoint, one level under the turn or
 * two): the calls the cancel cut end in the log with a cancelled result, so every `tool.start` has its `tool.end`; the
 * turn and every run under it show `waiting` only with the checkpoint they wait at, in their state and their search
 * attributes, until they end `cancelled`; and every skill run ends.
 */
const invoke = (skill: string) =>
  toolUse('invoke_skill', { skill, task: 'Confirm the claim.', params: { claim: 'x' } });
const askConfirm = toolUse('request_human_approval', {
  checkpoint: 'confirm',
  summary: 'Confirm x?',
  kind: 'approval',
  params: { claim: 'x' },
});

/** The checker library and `referee`, which has checker confirm a claim (a skill run that invokes a skill run). */
function skillsWithReferee(): string {
  const dir = skillsWithChecker('sf-cancel-events-skills-');
  fs.mkdirSync(path.join(dir, 'referee'));
  const about = 'Has a claim vouched for. Use when a claim must be checked by someone.';
  fs.writeFileSync(
    path.join(dir, 'referee', 'SKILL.md'),
    `---\nname: referee\ndescription: ${about}\n---\n\n# Referee\n\nInvoke checker to confirm the claim.\n`,
  );
  fs.writeFileSync(
    path.join(dir, 'referee', 'skillflow.yaml'),
    'parameters:\n  claim: { type: string, description: The claim. }\nchildren: [checker]\n',
  );
  return dir;
}

const cases: Array<[string, ScriptedMessage[], string[]]> = [
  ['the skill run it invoked (depth 1)', [{ content: [invoke('checker')] }, { content: [askConfirm] }], ['checker']],
  [
    'a skill run its skill run invoked (depth 2)',
    [{ content: [invoke('referee')] }, { content: [invoke('checker')] }, { content: [askConfirm] }],
    ['referee', 'checker'],
  ],
];

describe('a turn cancelled while a skill run under it waits at its checkpoint', () => {
  const harness = useWorkerHarness('cancel-events', { skillsDir: skillsWithReferee });

  describe.each(cases)('at %s', (_, script, skills) => {
    /** Starts the turn, waits for the checkpoint `skills.length` levels under it, cancels the turn and waits for its end. */
    async function cancelledAtCheckpoint(): Promise<WorkflowHandle> {
      const { env, fake, taskQueue } = harness;
      fake.enqueue(...script);
      const handle = await startTurn(env.client, taskQueue, 'check x');
      expect(await nextCheckpoint(handle)).toMatchObject({ name: 'confirm', skill: 'checker', depth: skills.length });
      await handle.cancel();
      expect(await handle.result()).toMatchObject({ status: 'cancelled', reason: 'cancelled' });
      return handle;
    }

    it('every tool.start in its log has its tool.end: the calls the cancel cut end cancelled', async () => {
      const handle = await cancelledAtCheckpoint();
      // The calls the cancel cut: the turn's invoke_skill, the skill runs' invoke_skill and request_human_approval.
      const events = (await handle.query(turnEventsQuery, 0)) as TurnEvent[];
      const starts = events.filter((event) => event.type === 'tool.start');
      const ends = events.filter((event) => event.type === 'tool.end');
      expect(starts).toHaveLength(skills.length + 1);
      expect(ends.map((end) => [end.callId, end.name, end.depth])).toEqual(
        starts.reverse().map((start) => [start.callId, start.name, start.depth]),
      );
      for (const end of ends) expect(end).toMatchObject({ isError: true, result: { cancelled: 'turn cancelled' } });
      expect(events.slice(-2).map((event) => event.type)).toEqual(['status', 'cancelled']);
    });

    it('the turn and every run under it show waiting only with a checkpoint, and end cancelled showing none', async () => {
      const { env } = harness;
      const handle = await cancelledAtCheckpoint();
      const records = (await handle.query(turnStateQuery)).skills ?? [];
      expect(records.map((record) => [record.skill, record.status])).toEqual(
        skills.map((skill) => [skill, 'cancelled']),
      );
      for (const run of [handle, ...records.map((record) => env.client.workflow.getHandle(record.workflowId))]) {
        expect((await run.describe()).status.name).not.toBe('RUNNING');
        expect(await run.query(turnStateQuery)).toMatchObject({ status: 'cancelled', pendingCheckpoint: null });
        const shown = await attributesAfterEachTask(run);
        expect({
          run: run.workflowId,
          waitingForNothing: shown.filter(([status, checkpoint]) => status === 'waiting' && !checkpoint),
        }).toEqual({ run: run.workflowId, waitingForNothing: [] });
        expect(shown.at(-1)).toEqual(['cancelled', null]);
        // Its history, with the cancel's patch markers, replays on the current code.
        await Worker.runReplayHistory(
          { workflowBundle: { codePath: process.env.SKILLFLOW_TEST_WORKFLOW_BUNDLE! }, sinks: quietSinks },
          await run.fetchHistory(),
          run.workflowId,
        );
      }
    });
  });

  it('a turn cancelled at its own checkpoint ends that call too, and ends showing no checkpoint', async () => {
    const { env, fake, taskQueue } = harness;
    fake.enqueue({ content: [askConfirm] });
    const handle = await startTurn(env.client, taskQueue, 'check x');
    expect(await nextCheckpoint(handle)).toMatchObject({ name: 'confirm' });
    await handle.cancel();
    expect(await handle.result()).toMatchObject({ status: 'cancelled', reason: 'cancelled' });
    const events = (await handle.query(turnEventsQuery, 0)) as TurnEvent[];
    const starts = events.filter((event) => event.type === 'tool.start');
    const ends = events.filter((event) => event.type === 'tool.end');
    expect(starts.map((start) => [start.callId, start.name])).toEqual([[expect.any(String), 'request_human_approval']]);
    expect(ends.map((end) => [end.callId, end.name, end.isError, end.result])).toEqual([
      [expect.any(String), 'request_human_approval', true, { cancelled: 'turn cancelled' }],
    ]);
    expect(events.slice(-2).map((event) => event.type)).toEqual(['status', 'cancelled']);
    const shown = await attributesAfterEachTask(handle);
    expect(shown.filter(([status, checkpoint]) => status === 'waiting' && !checkpoint)).toEqual([]);
    expect(shown.at(-1)).toEqual(['cancelled', null]);
  });
});

/**
 * SkillflowStatus and SkillflowCheckpoint as each workflow task of the run left them (from its start's attributes
 * through every upsert): what a query or a visibility listing between two tasks shows.
 */
async function attributesAfterEachTask(handle: WorkflowHandle): Promise<Array<[string | null, string | null]>> {
  const names = [searchAttributeNameOf.status, searchAttributeNameOf.checkpoint];
  const current = new Map<string, string | null>(names.map((name) => [name, null]));
  const shown: Array<[string | null, string | null]> = [];
  let changed = false;
  const { events } = await handle.fetchHistory();
  for (const event of events ?? []) {
    const fields =
      event.workflowExecutionStartedEventAttributes?.searchAttributes?.indexedFields ??
      event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
    for (const name of names) {
      const field = fields?.[name];
      if (!field) continue;
      current.set(name, keywordOf(field.data));
      changed = true;
    }
    if (changed && event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) {
      shown.push([current.get(names[0])!, current.get(names[1])!]);
      changed = false;
    }
  }
  if (changed) shown.push([current.get(names[0])!, current.get(names[1])!]);
  return shown;
}

/** A Keyword attribute's value in a payload; a cleared one (no data, null, or an empty list) is null. */
function keywordOf(data: Uint8Array | null | undefined): string | null {
  if (!data || data.length === 0) return null;
  const value: unknown = JSON.parse(Buffer.from(data).toString());
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' ? first : null;
}
