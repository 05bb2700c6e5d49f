import fs from 'node:fs';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Worker } from '@temporalio/worker';
import { defaultTurnSettings } from '../core/settings';
import { startTurnUpdate } from '../workflows/definitions';
import type { sessionWorkflow } from '../workflows/session';
import { text, toolUse, type FakeAnthropic } from './support/fake-anthropic';
import { useWorkerHarness } from './support/harness';
import type { TemporalTestEnv } from './support/temporal';
import { answerNext, startTurn } from './support/turns';

/**
 * Replays recorded histories against the current workflow code: a change that would break turns already running
 * fails here. Histories recorded by this test are replayed at once; the committed ones in test/fixtures/histories
 * (recorded with SKILLFLOW_RECORD_HISTORIES=1) keep older turns honest across changes.
 */
const fixturesDir = path.resolve(__dirname, 'fixtures', 'histories');

describe('replaying recorded histories', () => {
  const harness = useWorkerHarness('replay');
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let taskQueue: string;
  const recorded: Array<{ workflowId: string; history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>> }> = [];

  beforeAll(() => ({ env, fake, taskQueue } = harness));

  const record = async (handle: WorkflowHandle) => {
    await handle.result().catch(() => undefined);
    recorded.push({ workflowId: handle.workflowId, history: await handle.fetchHistory() });
  };

  it('records turns that use every path: tools, checkpoints, plans, cancellation, errors, sessions', async () => {
    fake.enqueue({ content: [text('plain answer')] });
    await record(await startTurn(env.client, taskQueue, 'hello'));

    fake.enqueue(
      { content: [toolUse('load_skill', { name: 'exam-mode-tuner' })] },
      { content: [toolUse('request_human_approval', { checkpoint: 'exam_params', summary: 's', kind: 'approval', params: { question_count: 1, time_limit_min: 5 } })] },
      { content: [toolUse('load_subskill', { skill: 'exam-mode-tuner', subskill: 'question-generation' })] },
      { content: [text('early answer')] },
      { content: [toolUse('request_human_approval', { checkpoint: 'question_1', summary: 'q', kind: 'question' }), toolUse('no_such_tool', {})] },
      { content: [text('stopping here')] },
    );
    const exam = await startTurn(env.client, taskQueue, 'exam');
    const params = await answerNext(exam, { action: 'modify', overrides: { question_count: 2 } });
    await answerNext(exam, { action: 'cancel' }, params.id);
    await record(exam);

    fake.enqueue({ error: { status: 529, type: 'overloaded_error', message: 'busy' } }, { content: [text('after a retry')], stopReason: 'max_tokens' }, { content: [text(' and more')] });
    await record(await startTurn(env.client, taskQueue, 'retry'));

    fake.enqueue({ content: [text('slow '.repeat(50))], delayMs: 300 });
    const cancelled = await startTurn(env.client, taskQueue, 'cancel me');
    const before = fake.requests.length;
    while (fake.requests.length === before) await new Promise((resolve) => setTimeout(resolve, 50));
    await cancelled.cancel();
    await record(cancelled);

    const session = await env.client.workflow.start<typeof sessionWorkflow>('sessionWorkflow', {
      workflowId: `session-replay${Date.now().toString(36)}`,
      taskQueue,
      args: [{ sessionId: `replay${Date.now().toString(36)}`, userId: 'tester', createdAt: new Date().toISOString(), settings: defaultTurnSettings }],
    });
    fake.enqueue({ content: [text('first')] }, { content: [text('second')] });
    for (const message of ['one', 'two']) {
      const { turnId } = await session.executeUpdate(startTurnUpdate, { args: [{ message }] });
      await record(env.client.workflow.getHandle(turnId));
    }
    await session.terminate('replay test done');
    recorded.push({ workflowId: session.workflowId, history: await session.fetchHistory() });
    expect(recorded).toHaveLength(7);

    if (process.env.SKILLFLOW_RECORD_HISTORIES === '1') {
      fs.mkdirSync(fixturesDir, { recursive: true });
      for (const [index, { workflowId }] of recorded.entries()) {
        const cli = process.env.SKILLFLOW_TEST_TEMPORAL_CLI!;
        const { stdout } = await promisify(execFile)(cli, ['workflow', 'show', '--address', env.address, '--workflow-id', workflowId, '--output', 'json'], { maxBuffer: 64 * 1024 * 1024 });
        fs.writeFileSync(path.join(fixturesDir, `history-${index + 1}.json`), stdout);
      }
    }
  });

  it('replays the fresh and the committed histories without a determinism error', async () => {
    const committed = fs.existsSync(fixturesDir)
      ? fs.readdirSync(fixturesDir).filter((file) => file.endsWith('.json')).map((file) => ({ workflowId: file, history: JSON.parse(fs.readFileSync(path.join(fixturesDir, file), 'utf8')) }))
      : [];
    const histories: Array<{ workflowId: string; history: unknown }> = [...recorded, ...committed];
    expect(histories.length).toBeGreaterThanOrEqual(7);
    const failures: string[] = [];
    for await (const result of Worker.runReplayHistories({ workflowBundle: { codePath: process.env.SKILLFLOW_TEST_WORKFLOW_BUNDLE! } }, histories)) {
      if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
    }
    expect(failures).toEqual([]);
  });
});
