import type { FastifyInstance } from 'fastify';
import { turnFailedErrorType } from '../core/turn';
import { sessionStateQuery, turnEventsQuery } from '../workflows/definitions';
import { authHeaders, buildTestApp, eventually } from './support/api';
import { text, toolUse } from './support/fake-anthropic';
import { useWorkerHarness } from './support/harness';
import { ApiDriver } from './support/scenario';

const exam = 'exam-mode-tuner';
const remaining =
  'checkpoint:exam_params → question-generation → adaptive-difficulty → performance-analytics → checkpoint:post_exam_routing';

/**
 * Operators see failures as failures: a turn that ends `failed` fails its workflow (Failed in the Temporal UI, found by
 * `ExecutionStatus = "Failed"`), while its session records its result and the API shows the turn as it did when the
 * workflow completed: the turn's own reason, error, usage, skill and step, not a generic workflow failure.
 */
describe('a failed turn', () => {
  const harness = useWorkerHarness('failed');
  let app: FastifyInstance;
  let api: ApiDriver;

  beforeAll(async () => {
    ({ app } = await buildTestApp(harness.env.client, harness.taskQueue, { SKILLFLOW_MAX_PLAN_VIOLATIONS: '2' }));
    api = new ApiDriver(app);
  });
  harness.closeFirst(async () => app?.close());

  it("is Failed in Temporal and found by ExecutionStatus, its session learns its result, and the API view is the turn's", async () => {
    const { env, fake } = harness;
    fake.enqueue(
      { content: [toolUse('load_skill', { name: exam })] },
      { content: [text('Done!')] },
      { content: [text('Really done!')] },
    );
    const turnId = await api.startTurn('exam');
    const ending = await api.finished(turnId);
    const handle = env.client.workflow.getHandle(turnId);
    await eventually(
      () => handle.describe(),
      (description) => description.status.name !== 'RUNNING',
    );
    expect((await handle.describe()).status.name).toBe('FAILED');
    // Read from the closed workflow, the view is what the turn showed as it ended (read then from its live state).
    const view = (await api.turn(turnId)).body;
    expect({ ...view, updatedAt: undefined }).toEqual({ ...ending, updatedAt: undefined });
    const message = `The model broke the plan of skill ${exam} at its start 2 times; the turn was stopped. Remaining: ${remaining}.`;
    expect(view).toMatchObject({
      id: turnId,
      status: 'failed',
      reason: 'plan_violations',
      error: { code: 'plan_violations', message },
      skill: exam,
      pendingCheckpoint: null,
    });
    expect(view.usage.inputTokens).toBeGreaterThan(0);
    expect(view.usage.outputTokens).toBeGreaterThan(0);

    await expect(handle.result()).rejects.toMatchObject({
      cause: { type: turnFailedErrorType, message, nonRetryable: true },
    });
    expect((await handle.query(turnEventsQuery, 0)).at(-1)).toMatchObject({
      type: 'error',
      code: 'plan_violations',
      message,
    });

    // Visibility catches up in the background: poll, with a deadline.
    const query = `WorkflowId = '${turnId}' AND ExecutionStatus = 'Failed'`;
    const deadline = Date.now() + 20_000;
    let found: string[] = [];
    while (found.length === 0 && Date.now() < deadline) {
      found = [];
      for await (const execution of env.client.workflow.list({ query })) found.push(execution.workflowId);
      if (found.length === 0) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(found).toEqual([turnId]);

    const session = env.client.workflow.getHandle(`session-${view.sessionId}`);
    const state = await session.query(sessionStateQuery);
    expect(state.activeTurnId).toBeUndefined();
    expect(state.turns).toEqual([
      expect.objectContaining({
        id: turnId,
        status: 'failed',
        reason: 'plan_violations',
        error: { code: 'plan_violations', message },
      }),
    ]);
    expect(
      (
        await app.inject({
          method: 'GET',
          url: `/v1/turns?status=failed&session=${view.sessionId}`,
          headers: authHeaders(),
        })
      ).json().turns,
    ).toEqual([expect.objectContaining({ id: turnId, status: 'failed', skill: exam })]);
  });

  it('a turn that completes or is cancelled stays Completed in Temporal, its status in the result', async () => {
    const { env, fake } = harness;
    fake.enqueue({ content: [text('Hello.')] });
    const turnId = await api.startTurn('hi');
    expect(await api.finished(turnId)).toMatchObject({ status: 'completed', output: 'Hello.' });
    expect((await env.client.workflow.getHandle(turnId).describe()).status.name).toBe('COMPLETED');
  });
});
