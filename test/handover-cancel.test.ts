import type { WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { separatePatches } from '../workflows/legacy/core/policy';
import type { TurnEvent } from '../core/events';
import { turnEventsQuery, turnStateQuery } from '../workflows/definitions';
import { skillsWithChecker } from './support/checker-skill';
import { testDeps } from './support/deps';
import { toolUse } from './support/fake-anthropic';
import { frozenWorkflowBundle } from './support/frozen-bundle';
import { patchesIn, useHandoverStack } from './support/handover';

/**
 * The deploy of cancel-ends-at-skill-return (docs/operators.md): a turn cancelled on the code before it while it showed
 * a skill run's checkpoint went back to `running` and started a model round; its history replays on the current code
 * as it ran. A turn waiting at a skill run's checkpoint on that code and cancelled after the deploy ends as the current
 * code does: `waiting` straight to `cancelled`, no model call, the patch recorded.
 */
const frozenCommit = '8d7c85e';
const invokeChecker = () =>
  toolUse('invoke_skill', { skill: 'checker', task: 'Confirm the claim.', params: { claim: 'x' } });
const askConfirm = () =>
  toolUse('request_human_approval', {
    checkpoint: 'confirm',
    summary: 'Confirm x?',
    kind: 'approval',
    params: { claim: 'x' },
  });

describe("handing a turn that shows a skill run's checkpoint from the code before cancel-ends-at-skill-return to the current code", () => {
  const stack = useHandoverStack('handover-cancel');
  const skillsDir = skillsWithChecker('sf-handover-cancel-skills-');

  it('a turn cancelled on the old code replays as it ran; one cancelled after the deploy goes from waiting to cancelled', async () => {
    const { env, fake, api, taskQueue } = stack;
    const oldWorker = await env.startWorker(taskQueue, testDeps(fake.url, { skillsDir }), undefined, {
      workflowBundlePath: frozenWorkflowBundle(frozenCommit),
    });

    // On the old code: one turn cancelled at the skill run's checkpoint, another left waiting at it.
    fake.enqueue({ content: [invokeChecker()] }, { content: [askConfirm()] });
    const cancelledOld = await api.startTurn('check x');
    await api.pending(cancelledOld);
    await env.client.workflow.getHandle(cancelledOld).cancel();
    expect(await api.finished(cancelledOld)).toMatchObject({ status: 'cancelled' });
    // The old code's flicker: running again after it waited, before cancelled.
    expect(statusesAfterWaiting(await eventsOf(env.client.workflow.getHandle(cancelledOld)))).toEqual([
      'waiting',
      'running',
      'cancelled',
    ]);

    fake.enqueue({ content: [invokeChecker()] }, { content: [askConfirm()] });
    const waiting = await api.startTurn('check x again');
    await api.pending(waiting);

    await stack.deploy(oldWorker, { skillsDir });

    // The old cancelled turn's history replays on the current code without a determinism error.
    const history = await env.client.workflow.getHandle(cancelledOld).fetchHistory();
    const sinks = {
      live: {
        logAppended: { fn: () => undefined, callDuringReplay: false },
        eventLogged: { fn: () => undefined, callDuringReplay: false },
      },
    };
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: process.env.SKILLFLOW_TEST_WORKFLOW_BUNDLE! }, sinks },
      history,
      cancelledOld,
    );
    // Its log, read on the current code, is the one its clients read: the skill run's cut checkpoint call without a
    // tool.end (cancel-ends-tool-calls is not in either history; the old turn answered its invoke_skill and went on).
    expect(unendedCalls(await eventsOf(env.client.workflow.getHandle(cancelledOld)))).toEqual([
      'request_human_approval',
    ]);

    // The turn waiting since the old code, cancelled on the current code: no model call, waiting straight to cancelled.
    const handle = env.client.workflow.getHandle(waiting);
    await handle.cancel();
    expect(await api.finished(waiting)).toMatchObject({
      status: 'cancelled',
      skills: [{ skill: 'checker', status: 'cancelled' }],
    });
    // The old code started a second model call here (cancelled before it was scheduled): only the one that invoked the skill.
    expect((await handle.query(turnStateQuery)).modelCalls).toBe(1);
    expect(statusesAfterWaiting(await eventsOf(handle))).toEqual(['waiting', 'cancelled']);
    expect(await patchesIn(handle)).toEqual(
      expect.arrayContaining([
        separatePatches.cancelEndsAtSkillReturn,
        separatePatches.cancelKeepsCheckpoint,
        separatePatches.cancelEndsToolCalls,
      ]),
    );
    // The calls the cancel cut end in its log, the skill run's (begun on the old code) included.
    expect(unendedCalls(await eventsOf(handle))).toEqual([]);
    expect(fake.pending).toBe(0);
  }, 120_000);
});

const eventsOf = (handle: WorkflowHandle) => handle.query(turnEventsQuery, 0) as Promise<TurnEvent[]>;

/** The names of the tool calls in the log with a tool.start and no tool.end. */
function unendedCalls(events: TurnEvent[]): string[] {
  const ended = new Set(events.flatMap((event) => (event.type === 'tool.end' ? [event.callId] : [])));
  return events.flatMap((event) => (event.type === 'tool.start' && !ended.has(event.callId) ? [event.name] : []));
}

/** The turn's status events from its first `waiting` on. */
function statusesAfterWaiting(events: TurnEvent[]): string[] {
  const statuses = events.flatMap((event) => (event.type === 'status' ? [event.status as string] : []));
  return statuses.slice(statuses.indexOf('waiting'));
}
