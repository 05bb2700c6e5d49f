import type { Worker } from '@temporalio/worker';
import { workflowTypes } from '../workflows/definitions';
import { rulePatches } from '../workflows/legacy/core/policy';
import { text, toolUse, type MessagesRequestBody } from './support/fake-anthropic';
import { patchesIn, useHandoverStack } from './support/handover';

/**
 * The deploy of child skills and structured outputs (docs/operators.md, "Changing workflow code"): a worker on the
 * frozen bundle of the code before them (test/fixtures/bundles/workflows-a45e16b.js.gz) starts an exam that waits at a
 * checkpoint; a worker with the current code takes over. The old exam finishes on its own rules (its final answer needs
 * no submit_output); a turn started afterwards runs on the current code (no patch marker), invokes a skill as a child
 * workflow, and is held to the exam's declared output.
 */
const frozenCommit = 'a45e16b';
const exam = 'exam-mode-tuner';
const subskill = (name: string) => toolUse('load_subskill', { skill: exam, subskill: name });
const ask = (checkpoint: string, kind: 'approval' | 'question', extra: Record<string, unknown> = {}) =>
  toolUse('request_human_approval', { checkpoint, summary: `About ${checkpoint}`, kind, ...extra });
const examParams = () =>
  ask('exam_params', 'approval', { params: { question_count: 1, time_limit_min: 35, concepts: ['arrays'] } });

const lastText = (body: MessagesRequestBody) => JSON.stringify(body.messages.at(-1));

describe('handing turns in flight from the code before child skills to the current code', () => {
  const stack = useHandoverStack('handover-skills');
  let oldWorker: Worker;
  beforeAll(async () => {
    oldWorker = await stack.startOldWorker(frozenCommit);
  });

  it("an exam waiting on the old code finishes on its rules; new turns invoke skills and hand in the exam's report", async () => {
    const { env, fake, api } = stack;
    fake.enqueue({ content: [toolUse('load_skill', { name: exam })] }, { content: [examParams()] });
    const waiting = await api.startTurn('Give me a practice test on arrays.');
    const params = await api.pending(waiting);
    expect(await patchesIn(env.client.workflow.getHandle(waiting))).not.toContain(rulePatches.structuredOutput);

    await stack.deploy(oldWorker);

    // The old exam ends with no report handed in: its final answer stands, as it did on the code it started on.
    fake.enqueue(
      { content: [subskill('question-generation')] },
      { content: [subskill('adaptive-difficulty')] },
      { content: [subskill('performance-analytics')] },
      { content: [text('You scored 100%.'), ask('post_exam_routing', 'approval')] },
      { content: [text('Well done.')] },
    );
    await api.answer(waiting, params.id, { action: 'approve' });
    const route = await api.pending(waiting, params.id);
    await api.answer(waiting, route.id, { action: 'choose', choice: 'Stop here' });
    expect(await api.finished(waiting)).toMatchObject({ status: 'completed', output: 'Well done.', artifacts: [] });
    expect(await patchesIn(env.client.workflow.getHandle(waiting))).toEqual([
      'skill-limits',
      'refused-checkpoints-end-turn',
      'declared-checkpoint-params',
      'route-scoped-to-plan',
    ]);

    // A new turn: the current rules, a skill run as a child workflow, the exam's report required.
    fake.enqueue(
      {
        content: [
          toolUse('invoke_skill', {
            skill: 'simple-writing',
            task: 'A one-line note.',
            params: { topic: 'arrays', type: 'summary' },
          }),
        ],
      },
      {
        content: [
          text(JSON.stringify({ title: 'Arrays', content: 'Arrays hold items.', word_count: 3, placeholders: [] })),
        ],
      },
      { content: [toolUse('load_skill', { name: exam })] },
      { content: [examParams()] },
      { content: [subskill('question-generation')] },
      { content: [subskill('adaptive-difficulty')] },
      { content: [subskill('performance-analytics')] },
      { content: [text('You scored 100%.'), ask('post_exam_routing', 'approval')] },
      { content: [text('Well done.')] },
      { content: [text('Well done, again.')] },
    );
    const fresh = await api.startTurn('Write a note on arrays, then test me.');
    const freshParams = await api.pending(fresh);
    await api.answer(fresh, freshParams.id, { action: 'approve' });
    const freshRoute = await api.pending(fresh, freshParams.id);
    await api.answer(fresh, freshRoute.id, { action: 'choose', choice: 'Stop here' });
    expect(await api.finished(fresh)).toMatchObject({
      status: 'failed',
      reason: 'invalid_output',
      skills: [{ skill: 'simple-writing', status: 'completed' }],
    });
    expect(lastText(fake.requests.at(-1)!.body)).toContain(
      'declares a structured output and it has not been handed in',
    );
    // A session started after the deploy is of the current type, and so is its turn: the current code reads no patch.
    const freshHandle = env.client.workflow.getHandle(fresh);
    expect((await freshHandle.describe()).type).toBe(workflowTypes.turn);
    expect(await patchesIn(freshHandle)).toEqual([]);
    expect(fake.pending).toBe(0);
  }, 120_000);
});
