import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { defaultTurnSettings } from '../core/settings';
import { sessionStateQuery, startTurnUpdate, turnStateQuery, workflowTypes } from '../workflows/definitions';
import type { sessionWorkflow } from '../workflows/session';
import { text, toolUse, type FakeAnthropic } from './support/fake-anthropic';
import { useWorkerHarness } from './support/harness';
import type { TemporalTestEnv } from './support/temporal';
import { answerNext } from './support/turns';

describe('sessions across turns', () => {
  const harness = useWorkerHarness('sessions');
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let taskQueue: string;
  let counter = 0;

  beforeAll(() => ({ env, fake, taskQueue } = harness));

  async function newSession(historyWindow = 10): Promise<WorkflowHandle<typeof sessionWorkflow>> {
    const sessionId = `sess${Date.now().toString(36)}${counter++}`.padEnd(12, '0');
    return env.client.workflow.start<typeof sessionWorkflow>(workflowTypes.session, {
      workflowId: `session-${sessionId}`,
      taskQueue,
      args: [
        {
          sessionId,
          userId: 'tester',
          createdAt: new Date().toISOString(),
          settings: { ...defaultTurnSettings, historyWindow, modelRetryInitialMs: 100 },
        },
      ],
    });
  }
  const send = (session: WorkflowHandle, message: string, supersede = false) =>
    session.executeUpdate(startTurnUpdate, { args: [{ message, supersede }] });
  const result = (turnId: string) => env.client.workflow.getHandle(turnId).result();

  it('turn 3 sees the text of turns 1 and 2, but not their tool traces', async () => {
    const session = await newSession();
    fake.enqueue(
      { content: [text('Looking it up.'), toolUse('list_skills', {})] },
      { content: [text('We have six skills.')] },
    );
    await result((await send(session, 'What skills are there?')).turnId);
    fake.enqueue({ content: [text('Arrays are contiguous.')] });
    await result((await send(session, 'What is an array?')).turnId);
    fake.enqueue({ content: [text('Yes.')] });
    const third = await send(session, 'Did I ask about arrays?');
    expect(third).toEqual({ turnId: `turn-${session.workflowId.slice('session-'.length)}-3`, number: 3 });
    await result(third.turnId);
    expect(fake.requests.at(-1)!.body.messages).toEqual([
      { role: 'user', content: 'What skills are there?' },
      { role: 'assistant', content: 'We have six skills.' },
      { role: 'user', content: 'What is an array?' },
      { role: 'assistant', content: 'Arrays are contiguous.' },
      {
        role: 'user',
        content: [{ type: 'text', text: 'Did I ask about arrays?', cache_control: { type: 'ephemeral' } }],
      },
    ]);
    const state = await session.query(sessionStateQuery);
    expect(state.turns.map((turn) => [turn.number, turn.status, turn.output])).toEqual([
      [1, 'completed', 'We have six skills.'],
      [2, 'completed', 'Arrays are contiguous.'],
      [3, 'completed', 'Yes.'],
    ]);
    expect(state.activeTurnId).toBeUndefined();
  });

  it('keeps only the configured window of earlier exchanges', async () => {
    const session = await newSession(1);
    fake.enqueue({ content: [text('one')] }, { content: [text('two')] }, { content: [text('three')] });
    await result((await send(session, 'first')).turnId);
    await result((await send(session, 'second')).turnId);
    await result((await send(session, 'third')).turnId);
    expect((fake.requests.at(-1)!.body.messages as unknown[]).slice(0, 2)).toEqual([
      { role: 'user', content: 'second' },
      { role: 'assistant', content: 'two' },
    ]);
  });

  it('one turn at a time: a new message while a turn waits is refused, naming the turn; supersede cancels it first', async () => {
    const session = await newSession();
    fake.enqueue({
      content: [toolUse('request_human_approval', { checkpoint: 'hold', summary: 'wait', kind: 'approval' })],
    });
    const first = await send(session, 'wait for me');
    const firstHandle = env.client.workflow.getHandle(first.turnId);
    for (;;) {
      const events = await firstHandle.query(turnStateQuery).catch(() => null);
      if ((events as { status?: string } | null)?.status === 'waiting') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const refused = send(session, 'another');
    await expect(refused).rejects.toBeInstanceOf(WorkflowUpdateFailedError);
    await expect(refused).rejects.toMatchObject({
      cause: { type: 'TurnInProgress', message: expect.stringContaining(first.turnId) },
    });

    fake.enqueue({ content: [text('New turn.')] });
    const second = await send(session, 'never mind', true);
    expect(await firstHandle.result()).toMatchObject({ status: 'cancelled' });
    expect(await result(second.turnId)).toMatchObject({ status: 'completed', output: 'New turn.' });
    const state = await session.query(sessionStateQuery);
    expect(state.turns.map((turn) => turn.status)).toEqual(['cancelled', 'completed']);
  });

  it('a turn waiting at a checkpoint is answered and recorded', async () => {
    const session = await newSession();
    fake.enqueue(
      { content: [toolUse('request_human_approval', { checkpoint: 'ok', summary: 'ok?', kind: 'question' })] },
      { content: [text('Thanks.')] },
    );
    const turn = await send(session, 'ask me');
    await answerNext(env.client.workflow.getHandle(turn.turnId), { action: 'answer', answer: 'fine' });
    expect(await result(turn.turnId)).toMatchObject({ status: 'completed', output: 'Thanks.' });
  });
});

describe('long sessions', () => {
  const harness = useWorkerHarness('long-sessions');

  it('continue-as-new keeps every turn, the history window and one turn at a time', async () => {
    const { env, fake, taskQueue } = harness;
    const sessionId = `long${Date.now().toString(36)}`;
    const session = await env.client.workflow.start<typeof sessionWorkflow>(workflowTypes.session, {
      workflowId: `session-${sessionId}`,
      taskQueue,
      args: [
        {
          sessionId,
          userId: 'tester',
          createdAt: new Date().toISOString(),
          settings: { ...defaultTurnSettings, historyWindow: 2 },
        },
      ],
    });
    const firstRun = (await session.describe()).runId;
    for (let n = 1; n <= 12; n++) {
      fake.enqueue({ content: [text(`answer ${n}`)] });
      const { turnId, number } = await session.executeUpdate(startTurnUpdate, { args: [{ message: `message ${n}` }] });
      expect(number).toBe(n);
      await env.client.workflow.getHandle(turnId).result();
    }
    const state = await session.query(sessionStateQuery);
    expect(state.turns.map((turn) => turn.output)).toEqual(Array.from({ length: 12 }, (_, i) => `answer ${i + 1}`));
    expect((await session.describe()).runId).not.toBe(firstRun);
    expect((fake.requests.at(-1)!.body.messages as unknown[]).slice(0, 4)).toEqual([
      { role: 'user', content: 'message 10' },
      { role: 'assistant', content: 'answer 10' },
      { role: 'user', content: 'message 11' },
      { role: 'assistant', content: 'answer 11' },
    ]);
  }, 120_000);
});
