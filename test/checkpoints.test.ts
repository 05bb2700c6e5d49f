import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { answerCheckpointUpdate, checkpointDecisionSignal, turnEventsQuery } from '../workflows/definitions';
import { bobKey, buildTestApp, eventually, operatorKey } from './support/api';
import { currentDetails, pastedAnswers } from './support/current-details';
import { text, toolUse, type FakeAnthropic, type MessagesRequestBody } from './support/fake-anthropic';
import { ApiDriver } from './support/scenario';
import { testDeps } from './support/deps';
import { useWorkerHarness } from './support/harness';
import type { TemporalTestEnv } from './support/temporal';

const ask = (checkpoint: string, extra: Record<string, unknown> = {}) =>
  toolUse('request_human_approval', { checkpoint, summary: `Decide ${checkpoint}`, kind: 'approval', ...extra });
const question = (checkpoint: string, extra: Record<string, unknown> = {}) =>
  toolUse('request_human_approval', { checkpoint, summary: `Answer ${checkpoint}`, kind: 'question', ...extra });

/** The tool_result blocks the model received in a request, as [tool_use_id, parsed content, is_error]. */
function toolResults(body: MessagesRequestBody): Array<[string, unknown, boolean]> {
  const last = body.messages[body.messages.length - 1] as { content: Array<Record<string, unknown>> };
  return last.content
    .filter((block) => block.type === 'tool_result')
    .map((block) => [
      block.tool_use_id as string,
      block.is_error ? block.content : JSON.parse(block.content as string),
      block.is_error === true,
    ]);
}

const modelParams = { question_count: 10, types: ['choice'], time_limit_min: 35 };

describe('human-in-the-loop checkpoints', () => {
  const harness = useWorkerHarness('checkpoints');
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let app: FastifyInstance;
  let api: ApiDriver;
  let taskQueue: string;
  const deps = () => testDeps(fake.url);

  beforeAll(async () => {
    ({ env, fake, taskQueue } = harness);
    ({ app } = await buildTestApp(env.client, taskQueue));
    api = new ApiDriver(app);
  });
  harness.closeFirst(async () => app?.close());

  it('approve: the turn waits, shows the checkpoint, and resumes with {"approved": true}', async () => {
    fake.enqueue(
      { content: [text('Let me check.'), ask('exam_params', { params: modelParams })] },
      { content: [text('Approved, going ahead.')] },
    );
    const turnId = await api.startTurn('exam please');
    const pending = await api.pending(turnId);
    expect(pending).toMatchObject({
      id: 'cp-1',
      name: 'exam_params',
      kind: 'approval',
      summary: 'Decide exam_params',
      params: modelParams,
      options: null,
    });
    expect((await api.turn(turnId)).body.status).toBe('waiting');

    const answered = await api.answer(turnId, 'cp-1', { action: 'approve' });
    expect(answered).toEqual({ code: 200, body: { checkpointId: 'cp-1', action: 'approve', by: 'alice' } });
    const done = await api.finished(turnId);
    expect(done).toMatchObject({ status: 'completed', output: 'Approved, going ahead.', pendingCheckpoint: null });
    expect(toolResults(fake.requests[1].body)).toEqual([[expect.any(String), { approved: true }, false]]);

    const events = await env.client.workflow.getHandle(turnId).query(turnEventsQuery, 0);
    const describe = (e: (typeof events)[number]) =>
      e.type === 'status' ? `status:${e.status}` : e.type === 'checkpoint.resolved' ? `resolved by ${e.by}` : e.type;
    expect(events.filter((e) => e.type.startsWith('checkpoint.') || e.type === 'status').map(describe)).toEqual([
      'status:running',
      'checkpoint.requested',
      'status:waiting',
      'resolved by alice',
      'status:running',
      'status:completed',
    ]);
  });

  it("the Temporal UI's current details name the pending checkpoint with answers ready to paste, and clear once it is answered", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    fake.enqueue({ content: [ask('exam_params', { params: modelParams, options: ['Short', 'Long'] })] });
    fake.respond(async () => {
      await released;
      return { content: [text('Going ahead.')] };
    });
    try {
      const turnId = await api.startTurn('exam please');
      await api.pending(turnId);
      const handle = env.client.workflow.getHandle(turnId);
      const details = await currentDetails(handle);
      expect(details).toMatch(
        /^\*\*Waiting for a human\*\* at checkpoint \*\*exam_params\*\* \(`cp-1`, approval\)\.\n\n> Decide exam_params\n/,
      );
      expect(details).toContain(
        `- Deadline: none (it waits until answered)\n- Parameters: \`${JSON.stringify(modelParams)}\`\n- Options: \`Short\`, \`Long\`\n- Actions: approve, modify, cancel, choose\n`,
      );
      const pasted = pastedAnswers(details);
      expect(Object.keys(pasted)).toEqual(['approve', 'modify', 'cancel', 'choose']);
      expect(pasted.modify).toEqual({ checkpointId: 'cp-1', action: 'modify', overrides: modelParams, by: 'operator' });

      // Pasted into the update dialog: an edit the checkpoint refuses comes back with the reason; the answer as offered is taken.
      const refused = handle.executeUpdate(answerCheckpointUpdate, {
        args: [{ ...pasted.choose, choice: 'Medium' } as never],
      });
      await expect(refused).rejects.toBeInstanceOf(WorkflowUpdateFailedError);
      await expect(refused).rejects.toMatchObject({
        cause: { message: 'choice must be one of the options exactly as offered: ["Short","Long"].' },
      });
      expect(await handle.executeUpdate(answerCheckpointUpdate, { args: [pasted.modify as never] })).toEqual({
        checkpointId: 'cp-1',
        action: 'modify',
      });

      // Answered, the turn runs its next model call and waits for nobody.
      await eventually(
        async () => fake.requests.length,
        (count) => count === 2,
      );
      expect((await api.turn(turnId)).body.status).toBe('running');
      expect(await currentDetails(handle)).toBe('');
      release();
      expect(await api.finished(turnId)).toMatchObject({ status: 'completed', output: 'Going ahead.' });
    } finally {
      fake.respond(undefined);
      release();
    }
  });

  it('modify: overrides must be params of the checkpoint with the same JSON types', async () => {
    fake.enqueue({ content: [ask('exam_params', { params: modelParams })] }, { content: [text('Fifteen it is.')] });
    const turnId = await api.startTurn('exam');
    await api.pending(turnId);
    const unknownKey = await api.answer(turnId, 'cp-1', { action: 'modify', overrides: { essays: true } });
    expect(unknownKey.code).toBe(400);
    expect(unknownKey.body.error).toEqual({
      code: 'invalid_decision',
      message: 'overrides.essays is not allowed here; the allowed names are question_count, types, time_limit_min.',
      details: [
        {
          path: 'overrides.essays',
          rule: 'additionalProperties',
          allowed: ['question_count', 'types', 'time_limit_min'],
          message: 'overrides.essays is not allowed here; the allowed names are question_count, types, time_limit_min',
        },
      ],
      requestId: expect.any(String),
    });
    const wrongType = await api.answer(turnId, 'cp-1', { action: 'modify', overrides: { question_count: '15' } });
    expect(wrongType.code).toBe(400);
    expect(wrongType.body.error.message).toBe('overrides.question_count is a string, not a number.');
    const empty = await api.answer(turnId, 'cp-1', { action: 'modify' });
    expect(empty.code).toBe(400);
    expect((await api.turn(turnId)).body).toMatchObject({ status: 'waiting', pendingCheckpoint: { id: 'cp-1' } });

    const ok = await api.answer(turnId, 'cp-1', {
      action: 'modify',
      overrides: { question_count: 15, types: ['choice', 'fill_blank'] },
    });
    expect(ok.code).toBe(200);
    await api.finished(turnId);
    expect(toolResults(fake.requests[1].body)[0][1]).toEqual({
      approved: true,
      overrides: { question_count: 15, types: ['choice', 'fill_blank'] },
    });
  });

  it('choose: only an option exactly as offered; an approval without options refuses choose', async () => {
    const options = ['→ memory-comprehension-coach', '→ study-guide-creator', 'Stop here'];
    fake.enqueue({ content: [ask('post_exam_routing', { options })] }, { content: [text('Routing.')] });
    const turnId = await api.startTurn('route me');
    await api.pending(turnId);
    const notOffered = await api.answer(turnId, 'cp-1', { action: 'choose', choice: 'Stop' });
    expect(notOffered.code).toBe(400);
    expect(notOffered.body.error.message).toContain('choice must be one of the options exactly as offered');
    expect((await api.answer(turnId, 'cp-1', { action: 'answer', answer: 'x' })).code).toBe(400);
    expect((await api.answer(turnId, 'cp-1', { action: 'choose', choice: 'Stop here' })).code).toBe(200);
    await api.finished(turnId);
    expect(toolResults(fake.requests[1].body)[0][1]).toEqual({ choice: 'Stop here' });

    fake.enqueue({ content: [ask('plain')] });
    const second = await api.startTurn('no options');
    await api.pending(second);
    const choose = await api.answer(second, 'cp-1', { action: 'choose', choice: 'anything' });
    expect(choose.code).toBe(400);
    expect(choose.body.error.message).toBe('An approval checkpoint accepts approve, modify, cancel; not "choose".');
    fake.enqueue({ content: [text('bye')] });
    await api.answer(second, 'cp-1', { action: 'cancel' });
    await api.finished(second);
  });

  it('question: answer returns the free text; approve and modify are refused', async () => {
    fake.enqueue({ content: [question('q1')] }, { content: [text('Correct!')] });
    const turnId = await api.startTurn('quiz');
    await api.pending(turnId);
    expect((await api.answer(turnId, 'cp-1', { action: 'approve' })).code).toBe(400);
    expect((await api.answer(turnId, 'cp-1', { action: 'modify', overrides: {} })).code).toBe(400);
    expect((await api.answer(turnId, 'cp-1', { action: 'answer', answer: '   ' })).code).toBe(400);
    expect((await api.answer(turnId, 'cp-1', { action: 'answer', answer: 'O(log n)' })).code).toBe(200);
    expect(await api.finished(turnId)).toMatchObject({ status: 'completed', output: 'Correct!' });
    expect(toolResults(fake.requests[1].body)[0][1]).toEqual({ answer: 'O(log n)' });
  });

  it('cancel: the remaining calls are skipped, the model explains without tools, the turn ends cancelled', async () => {
    fake.enqueue(
      { content: [ask('exam_params'), toolUse('load_skill', { name: 'x' }, 'toolu_after')] },
      { content: [text('Stopped before generating questions.')] },
    );
    const turnId = await api.startTurn('exam');
    await api.pending(turnId);
    expect((await api.answer(turnId, 'cp-1', { action: 'cancel' })).code).toBe(200);
    const done = await api.finished(turnId);
    expect(done).toMatchObject({
      status: 'cancelled',
      reason: 'cancelled_by_user',
      output: 'Stopped before generating questions.',
    });
    const results = toolResults(fake.requests[1].body);
    expect(results.map(([, content]) => content)).toEqual([{ cancelled: true }, { skipped: 'turn cancelled' }]);
    expect(results[1][0]).toBe('toolu_after');
    expect(fake.requests[1].body.tool_choice).toEqual({ type: 'none' });
  });

  it('404 for unknown ids, 409 once answered or ended, and the turn untouched by rejections', async () => {
    fake.enqueue({ content: [ask('a')] }, { content: [text('done')] });
    const turnId = await api.startTurn('go');
    await api.pending(turnId);
    expect((await api.answer(turnId, 'cp-7', { action: 'approve' })).code).toBe(404);
    expect((await api.answer('turn-0123456789abcdef0123-1', 'cp-1', { action: 'approve' })).code).toBe(404);
    expect((await api.answer(turnId, 'cp-1', { action: 'bogus' })).code).toBe(400);
    expect((await api.answer(turnId, 'cp-1', { action: 'approve', extra: 1 })).code).toBe(400);
    expect((await api.answer(turnId, 'cp-1', { action: 'approve' })).code).toBe(200);
    expect((await api.answer(turnId, 'cp-1', { action: 'approve' })).code).toBe(409);
    await api.finished(turnId);
    const ended = await api.answer(turnId, 'cp-1', { action: 'approve' });
    expect(ended.code).toBe(409);
    expect(ended.body.error.code).toBe('checkpoint_not_pending');
  });

  it('two concurrent answers: exactly one is recorded, the other gets 409', async () => {
    fake.enqueue({ content: [ask('race')] }, { content: [text('one decision')] });
    const turnId = await api.startTurn('race');
    await api.pending(turnId);
    const answers = await Promise.all([
      api.answer(turnId, 'cp-1', { action: 'approve' }),
      api.answer(turnId, 'cp-1', { action: 'cancel' }),
    ]);
    expect(answers.map((a) => a.code).sort()).toEqual([200, 409]);
    await api.finished(turnId);
    const events = await env.client.workflow.getHandle(turnId).query(turnEventsQuery, 0);
    expect(events.filter((e) => e.type === 'checkpoint.resolved')).toHaveLength(1);
  });

  it("only the turn's user or an operator may answer, and the decision records who", async () => {
    fake.enqueue({ content: [ask('who')] }, { content: [text('ok')] });
    const turnId = await api.startTurn('who decides');
    await api.pending(turnId);
    expect((await api.answer(turnId, 'cp-1', { action: 'approve' }, bobKey)).code).toBe(404);
    expect(await api.answer(turnId, 'cp-1', { action: 'approve' }, operatorKey)).toEqual({
      code: 200,
      body: { checkpointId: 'cp-1', action: 'approve', by: 'ops' },
    });
    await api.finished(turnId);
  });

  it('tool calls after a checkpoint run after the decision, in order; two checkpoints are asked one after the other', async () => {
    fake.enqueue(
      { content: [ask('first'), toolUse('not_a_tool', {}, 'toolu_mid'), ask('second')] },
      { content: [text('both done')] },
    );
    const turnId = await api.startTurn('two');
    const first = await api.pending(turnId);
    expect(first.name).toBe('first');
    expect(fake.requests).toHaveLength(1);
    await api.answer(turnId, first.id, { action: 'approve' });
    const second = await api.pending(turnId, first.id);
    expect(second).toMatchObject({ id: 'cp-2', name: 'second' });
    const events = await env.client.workflow.getHandle(turnId).query(turnEventsQuery, 0);
    expect(events.filter((e) => e.type === 'tool.end').map((e) => (e as { callId: string }).callId)).toContain(
      'toolu_mid',
    );
    await api.answer(turnId, second.id, { action: 'approve' });
    await api.finished(turnId);
    expect(toolResults(fake.requests[1].body).map(([, content, isError]) => [isError ? 'error' : content])).toEqual([
      [{ approved: true }],
      ['error'],
      [{ approved: true }],
    ]);
  });

  describe('deadlines', () => {
    let shortApp: FastifyInstance;
    let shortApi: ApiDriver;
    beforeAll(async () => {
      ({ app: shortApp } = await buildTestApp(env.client, taskQueue, { SKILLFLOW_CHECKPOINT_TTL_MS: '1500' }));
      shortApi = new ApiDriver(shortApp);
    });
    afterAll(async () => shortApp?.close());

    it('expiry with the cancel policy ends the turn cancelled with reason expired', async () => {
      fake.enqueue({ content: [ask('slow_human')] });
      const turnId = await shortApi.startTurn('wait for me');
      const pending = await shortApi.pending(turnId);
      expect(Date.parse(pending.expiresAt!) - Date.parse(pending.requestedAt)).toBe(1500);
      const done = await shortApi.finished(turnId);
      expect(done).toMatchObject({ status: 'cancelled', reason: 'expired' });
      const events = await env.client.workflow.getHandle(turnId).query(turnEventsQuery, 0);
      expect(events.map((e) => e.type)).toContain('checkpoint.expired');
      expect(events.at(-1)).toMatchObject({ type: 'cancelled', reason: 'expired' });
      expect(fake.requests).toHaveLength(1);
      expect((await shortApi.answer(turnId, 'cp-1', { action: 'approve' })).code).toBe(409);
    });

    it('expiry with the skip policy tells the model nobody answered, and the turn goes on', async () => {
      const { app: skipApp } = await buildTestApp(env.client, taskQueue, {
        SKILLFLOW_CHECKPOINT_TTL_MS: '1000',
        SKILLFLOW_CHECKPOINT_ON_TIMEOUT: 'skip',
      });
      try {
        fake.enqueue({ content: [question('q')] }, { content: [text('Skipped that one.')] });
        const turnId = await new ApiDriver(skipApp).startTurn('skip');
        const done = await new ApiDriver(skipApp).finished(turnId);
        expect(done).toMatchObject({ status: 'completed', output: 'Skipped that one.' });
        expect(toolResults(fake.requests[1].body)[0][1]).toMatchObject({ skipped: true });
      } finally {
        await skipApp.close();
      }
    });
  });

  it('operators can answer with a plain signal from the Temporal CLI; an invalid signal is logged and ignored', async () => {
    fake.enqueue({ content: [ask('cli')] }, { content: [text('signalled')] });
    const turnId = await api.startTurn('cli please');
    await api.pending(turnId);
    const cli = process.env.SKILLFLOW_TEST_TEMPORAL_CLI!;
    const signal = (input: unknown) =>
      promisify(execFile)(cli, [
        'workflow',
        'signal',
        '--address',
        env.address,
        '--workflow-id',
        turnId,
        '--name',
        checkpointDecisionSignal.name,
        '--input',
        JSON.stringify(input),
      ]);
    await signal({ checkpointId: 'cp-1', action: 'choose', choice: 'nope', by: 'ops-cli' });
    await signal({ checkpointId: 'cp-9', action: 'approve', by: 'ops-cli' });
    expect((await api.turn(turnId)).body).toMatchObject({ status: 'waiting', pendingCheckpoint: { id: 'cp-1' } });
    await signal({ checkpointId: 'cp-1', action: 'approve', by: 'ops-cli' });
    expect(await api.finished(turnId)).toMatchObject({ status: 'completed', output: 'signalled' });
    const events = await env.client.workflow.getHandle(turnId).query(turnEventsQuery, 0);
    expect(events.find((e) => e.type === 'checkpoint.resolved')).toMatchObject({
      checkpointId: 'cp-1',
      action: 'approve',
      by: 'ops-cli',
    });
  });

  it('a ten-question exam through the API: every question is its own checkpoint, ids stay in order', async () => {
    let asked = 0;
    fake.respond((body) => {
      const results = toolResults(body);
      if (asked > 0) expect(results[0][1]).toEqual({ answer: `answer ${asked}` });
      if (asked === 10) return { content: [text('You answered all ten.')] };
      asked++;
      return { content: [text(`Question ${asked}:`), question(`question_${asked}`)] };
    });
    const turnId = await api.startTurn('ten questions');
    let previous: string | undefined;
    for (let n = 1; n <= 10; n++) {
      const pending = await api.pending(turnId, previous);
      expect(pending).toMatchObject({ id: `cp-${n}`, name: `question_${n}` });
      expect((await api.answer(turnId, pending.id, { action: 'answer', answer: `answer ${n}` })).code).toBe(200);
      previous = pending.id;
    }
    expect(await api.finished(turnId)).toMatchObject({ status: 'completed', output: 'You answered all ten.' });
  });

  it('a worker restart while the turn waits loses nothing', async () => {
    const queue = env.newTaskQueue('restart');
    let worker = await env.startWorker(queue, deps());
    const { app: restartApp } = await buildTestApp(env.client, queue);
    const restartApi = new ApiDriver(restartApp);
    try {
      fake.enqueue(
        { content: [text('Before the restart.'), question('survive')] },
        { content: [text('After the restart.')] },
      );
      const turnId = await restartApi.startTurn('survive');
      await restartApi.pending(turnId);
      await env.stopWorker(worker);
      worker = await env.startWorker(queue, deps());
      expect((await restartApi.answer(turnId, 'cp-1', { action: 'answer', answer: 'still here' })).code).toBe(200);
      expect(await restartApi.finished(turnId)).toMatchObject({ status: 'completed', output: 'After the restart.' });
      expect(toolResults(fake.requests.at(-1)!.body)[0][1]).toEqual({ answer: 'still here' });
      expect(fake.requests.at(-1)!.body.messages[1]).toMatchObject({ role: 'assistant' });
    } finally {
      await restartApp.close();
    }
  });
});
