import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { allPatchIds } from '../core/policy';
import { buildTestApp } from './support/api';
import { testDeps } from './support/deps';
import { startFakeAnthropic, text, toolUse, type FakeAnthropic, type MessagesRequestBody } from './support/fake-anthropic';
import { frozenWorkflowBundle } from './support/frozen-bundle';
import { ApiDriver } from './support/scenario';
import { TemporalTestEnv } from './support/temporal';

/**
 * The deploy of the tool registry, in a test: a worker running the frozen bundle of the code before it
 * (test/fixtures/bundles/workflows-a45e16b.js.gz, engine tools only) starts a turn that waits at a checkpoint; a worker
 * with the current code and registered tools takes over. The old turn finishes as it started (no tool catalog read, the
 * engine's tools only); a turn started afterwards reads the catalog (patch tool-registry) and uses a registered tool.
 */
const frozenCommit = 'a45e16b';

async function patchesIn(handle: WorkflowHandle): Promise<string[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).flatMap((event) => {
    const marker = event.markerRecordedEventAttributes;
    const data = marker?.markerName === 'core_patch' ? marker.details?.['patch-data']?.payloads?.[0]?.data : undefined;
    return data ? [(JSON.parse(new TextDecoder().decode(data)) as { id: string }).id] : [];
  });
}

async function activityTypes(handle: WorkflowHandle): Promise<string[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).flatMap((event) => (event.activityTaskScheduledEventAttributes ? [event.activityTaskScheduledEventAttributes.activityType?.name ?? ''] : []));
}

const toolNames = (body: MessagesRequestBody) => (body.tools as Array<{ name: string }>).map((tool) => tool.name);

describe('handing turns in flight to the code with the tool registry', () => {
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let app: FastifyInstance;
  let api: ApiDriver;
  const taskQueue = `handover-tools-${Date.now().toString(36)}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-handover-tools-'));

  beforeAll(async () => {
    env = await TemporalTestEnv.connect();
    fake = await startFakeAnthropic();
    ({ app } = await buildTestApp(env.client, taskQueue));
    api = new ApiDriver(app);
  });
  afterAll(async () => {
    await app?.close();
    await env?.close();
    await fake?.close();
  });

  it('an old turn finishes with the engine tools only; a new one reads the tool catalog and uses a registered tool', async () => {
    const oldWorker = await env.startWorker(taskQueue, testDeps(fake.url, { dataDir }), undefined, { workflowBundlePath: frozenWorkflowBundle(frozenCommit) });
    fake.enqueue({ content: [toolUse('request_human_approval', { checkpoint: 'which_numbers', summary: 'Which numbers?', kind: 'question' })] });
    const session = await api.createSession();
    const waiting = (await api.sendMessage(session, { message: 'Add two numbers for me.' })).body.id as string;
    const params = await api.pending(waiting);

    await env.stopWorker(oldWorker);
    await env.startWorker(taskQueue, testDeps(fake.url, { dataDir, rootGrants: ['calculator'] }));

    // The old turn: it offers what it offered before (no registered tool), and a call of one is no tool it knows.
    fake.enqueue({ content: [toolUse('calculator', { expression: '1+1' })] }, { content: [text('Stopping here.')] });
    await api.answer(waiting, params.id, { action: 'answer', answer: '1 and 1' });
    expect(await api.finished(waiting)).toMatchObject({ status: 'completed' });
    const oldHandle = env.client.workflow.getHandle(waiting);
    expect(await patchesIn(oldHandle)).toEqual(['skill-limits', 'refused-checkpoints-end-turn', 'declared-checkpoint-params', 'route-scoped-to-plan']);
    expect(await activityTypes(oldHandle)).not.toContain('toolCatalog');
    expect(toolNames(fake.requests.at(-1)!.body)).not.toContain('calculator');
    expect(JSON.stringify(fake.requests.at(-1)!.body.messages)).toContain('There is no tool named \\"calculator\\"');

    // A new turn: the catalog is read once at its start, and the root's default tool runs in the runTool activity.
    fake.enqueue({ content: [toolUse('calculator', { expression: '6 * 7' })] }, { content: [text('42.')] });
    const fresh = (await api.sendMessage(session, { message: 'What is 6 times 7?' })).body.id as string;
    expect(await api.finished(fresh)).toMatchObject({ status: 'completed', output: '42.' });
    const freshHandle = env.client.workflow.getHandle(fresh);
    expect((await patchesIn(freshHandle)).sort()).toEqual([...allPatchIds].sort());
    expect(await activityTypes(freshHandle)).toEqual(['skillCatalog', 'toolCatalog', 'callModel', 'runTool', 'callModel']);
    expect(toolNames(fake.requests.at(-2)!.body)).toContain('calculator');
    expect(JSON.stringify(fake.requests.at(-1)!.body.messages)).toContain('6 * 7 = 42');
    expect(fake.pending).toBe(0);
  }, 120_000);
});
