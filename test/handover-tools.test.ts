import type { WorkflowHandle } from '@temporalio/client';
import { baselinePatch, separatePatches } from '../workflows/legacy/core/policy';
import { text, toolUse, type MessagesRequestBody } from './support/fake-anthropic';
import { patchesIn, useHandoverStack } from './support/handover';

/**
 * The deploy of the tool registry, in a test: a worker running the frozen bundle of the code before it
 * (test/fixtures/bundles/workflows-a45e16b.js.gz, engine tools only) starts a turn that waits at a checkpoint; a worker
 * with the current code and registered tools takes over. The old turn finishes as it started (no tool catalog read, the
 * engine's tools only); a turn started afterwards reads the catalog (patch tool-registry) and uses a registered tool.
 */
const frozenCommit = 'a45e16b';

async function activityTypes(handle: WorkflowHandle): Promise<string[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).flatMap((event) =>
    event.activityTaskScheduledEventAttributes
      ? [event.activityTaskScheduledEventAttributes.activityType?.name ?? '']
      : [],
  );
}

const toolNames = (body: MessagesRequestBody) => (body.tools as Array<{ name: string }>).map((tool) => tool.name);

describe('handing turns in flight to the code with the tool registry', () => {
  const stack = useHandoverStack('handover-tools');

  it('an old turn finishes with the engine tools only; a new one reads the tool catalog and uses a registered tool', async () => {
    const { env, fake, api } = stack;
    const oldWorker = await stack.startOldWorker(frozenCommit);
    fake.enqueue({
      content: [
        toolUse('request_human_approval', { checkpoint: 'which_numbers', summary: 'Which numbers?', kind: 'question' }),
      ],
    });
    const session = await api.createSession();
    const waiting = (await api.sendMessage(session, { message: 'Add two numbers for me.' })).body.id as string;
    const params = await api.pending(waiting);

    await stack.deploy(oldWorker, { rootGrants: ['calculator'] });

    // The old turn: it offers what it offered before (no registered tool), and a call of one is no tool it knows.
    fake.enqueue({ content: [toolUse('calculator', { expression: '1+1' })] }, { content: [text('Stopping here.')] });
    await api.answer(waiting, params.id, { action: 'answer', answer: '1 and 1' });
    expect(await api.finished(waiting)).toMatchObject({ status: 'completed' });
    const oldHandle = env.client.workflow.getHandle(waiting);
    expect(await patchesIn(oldHandle)).toEqual([
      'skill-limits',
      'refused-checkpoints-end-turn',
      'declared-checkpoint-params',
      'route-scoped-to-plan',
    ]);
    expect(await activityTypes(oldHandle)).not.toContain('toolCatalog');
    expect(toolNames(fake.requests.at(-1)!.body)).not.toContain('calculator');
    expect(JSON.stringify(fake.requests.at(-1)!.body.messages)).toContain('There is no tool named \\"calculator\\"');

    // A new turn: the catalog is read once at its start (with the skill catalog, in one activity) by reference, the
    // detail of the root's default tool read back before the first round, and that tool runs in the runTool activity.
    fake.enqueue({ content: [toolUse('calculator', { expression: '6 * 7' })] }, { content: [text('42.')] });
    const fresh = (await api.sendMessage(session, { message: 'What is 6 times 7?' })).body.id as string;
    expect(await api.finished(fresh)).toMatchObject({ status: 'completed', output: '42.' });
    const freshHandle = env.client.workflow.getHandle(fresh);
    expect((await patchesIn(freshHandle)).sort()).toEqual(
      [
        baselinePatch,
        separatePatches.spendingBounds,
        separatePatches.turnStartInOneActivity,
        separatePatches.toolCatalogByReference,
      ].sort(),
    );
    expect(await activityTypes(freshHandle)).toEqual([
      'readTurnStart',
      'readToolDetails',
      'callModel',
      'runTool',
      'callModel',
    ]);
    expect(toolNames(fake.requests.at(-2)!.body)).toContain('calculator');
    expect(JSON.stringify(fake.requests.at(-1)!.body.messages)).toContain('6 * 7 = 42');
    expect(fake.pending).toBe(0);
  }, 120_000);
});
