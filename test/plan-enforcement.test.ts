import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { TurnResult } from '../core/turn';
import { turnEventsQuery } from '../workflows/definitions';
import { buildTestApp } from './support/api';
import { bundledSkillsDir, testDeps } from './support/deps';
import { examOutput } from './support/exam-script';
import { text, toolUse, type FakeAnthropic, type MessagesRequestBody } from './support/fake-anthropic';
import { ApiDriver } from './support/scenario';
import { useWorkerHarness } from './support/harness';
import type { TemporalTestEnv } from './support/temporal';

const exam = 'exam-mode-tuner';
const loadSkill = (name = exam) => toolUse('load_skill', { name });
const subskill = (name: string, skill = exam) => toolUse('load_subskill', { skill, subskill: name });
const ask = (checkpoint: string, kind: 'approval' | 'question', extra: Record<string, unknown> = {}) =>
  toolUse('request_human_approval', { checkpoint, summary: `About ${checkpoint}`, kind, ...extra });
const examParams = (params: Record<string, unknown> = {}) =>
  ask('exam_params', 'approval', {
    params: { question_count: 2, time_limit_min: 35, concepts: ['arrays', 'linked lists'], ...params },
  });
const handIn = (questions = 2) => toolUse('submit_output', { output: examOutput(questions) });
const routing = () => ask('post_exam_routing', 'approval', { options: ['whatever the model offers'] });
const routes = {
  coach: '→ memory-comprehension-coach (consolidate weak areas)',
  stop: 'Stop here',
};

/** The tool results the model got in a request: [content, isError] in order. */
function resultsIn(body: MessagesRequestBody): Array<[string, boolean]> {
  const last = body.messages[body.messages.length - 1] as { content: string | Array<Record<string, unknown>> };
  if (typeof last.content === 'string') return [];
  return last.content.filter((b) => b.type === 'tool_result').map((b) => [String(b.content), b.is_error === true]);
}
const textsIn = (body: MessagesRequestBody): string[] => {
  const last = body.messages[body.messages.length - 1] as { content: string | Array<Record<string, unknown>> };
  return typeof last.content === 'string'
    ? [last.content]
    : last.content.filter((b) => b.type === 'text').map((b) => String(b.text));
};

/** The bundled library with the exam's clocks shortened, so deadlines and expiries fit in a test. */
function libraryWithShortClocks(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-plan-'));
  fs.cpSync(bundledSkillsDir, dir, { recursive: true });
  const sidecar = path.join(dir, exam, 'skillflow.yaml');
  const yaml = fs
    .readFileSync(sidecar, 'utf8')
    .replace(/exam_params:\n    kind: approval\n    ttl: 30m/, 'exam_params:\n    kind: approval\n    ttl: 2s')
    .replace('unit: minutes', 'unit: seconds');
  fs.writeFileSync(sidecar, yaml);
  return dir;
}

describe('the plan is enforced whatever the model does', () => {
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let app: FastifyInstance;
  let api: ApiDriver;
  let shortApp: FastifyInstance;
  let shortApi: ApiDriver;
  let queue: string;
  const harness = useWorkerHarness('plan');

  beforeAll(async () => {
    ({ env, fake, taskQueue: queue } = harness);
    ({ app } = await buildTestApp(env.client, queue));
    api = new ApiDriver(app);
    const shortQueue = env.newTaskQueue('plan-short');
    await env.startWorker(shortQueue, testDeps(fake.url, { skillsDir: libraryWithShortClocks() }));
    ({ app: shortApp } = await buildTestApp(env.client, shortQueue));
    shortApi = new ApiDriver(shortApp);
  });
  harness.closeFirst(async () => {
    await app?.close();
    await shortApp?.close();
  });

  it('runs the full exam-mode-tuner plan end to end through the API', async () => {
    fake.enqueue(
      { content: [text('Loading the exam skill.'), loadSkill()] },
      { content: [examParams()] },
      { content: [subskill('question-generation')] },
      { content: [text('Question 1: what is an array?'), ask('question_1', 'question')] },
      { content: [subskill('adaptive-difficulty')] },
      { content: [text('Question 2: what is a linked list?'), ask('question_2', 'question')] },
      { content: [subskill('adaptive-difficulty')] },
      { content: [subskill('performance-analytics')] },
      { content: [handIn()] },
      { content: [text('You scored 100%.'), routing()] },
      { content: [text('Great work. Come back any time.')] },
    );
    const turnId = await api.startTurn('Give me a practice test on data structures.');
    const params = await api.pending(turnId);
    expect(params).toMatchObject({ name: 'exam_params', params: { question_count: 2, time_limit_min: 35 } });
    expect((await api.turn(turnId)).body).toMatchObject({ skill: exam, step: null });
    await api.answer(turnId, params.id, { action: 'approve' });
    const q1 = await api.pending(turnId, params.id);
    expect((await api.turn(turnId)).body).toMatchObject({ skill: exam, step: 'question-generation' });
    await api.answer(turnId, q1.id, { action: 'answer', answer: 'A contiguous block of elements.' });
    const q2 = await api.pending(turnId, q1.id);
    await api.answer(turnId, q2.id, { action: 'answer', answer: 'Nodes linked by pointers.' });
    const route = await api.pending(turnId, q2.id);
    expect(route.options).toEqual([
      routes.coach,
      '→ study-guide-creator (full restudy)',
      '→ exam-mode-tuner again (harder test)',
      routes.stop,
    ]);
    await api.answer(turnId, route.id, { action: 'choose', choice: routes.stop });
    const done = await api.finished(turnId);
    expect(done).toMatchObject({
      status: 'completed',
      output: 'Great work. Come back any time.',
      skill: exam,
      step: 'checkpoint:post_exam_routing',
    });
    expect(fake.requests.flatMap((r) => resultsIn(r.body)).filter(([, isError]) => isError)).toEqual([]);

    const adaptResult = resultsIn(fake.requests[5].body)[0][0];
    expect(adaptResult).toMatch(/^Subskill adaptive-difficulty of skill exam-mode-tuner/);
    expect(adaptResult).toMatch(
      /Step limit: adaptive-difficulty may run at most 60 times in this plan; this is run 1, 59 left\.$/,
    );

    const events = await env.client.workflow.getHandle(turnId).query(turnEventsQuery, 0);
    // The model got the skill texts; the log shows which texts, by reference (issue 15.2).
    const loadResult = resultsIn(fake.requests[1].body)[0][0];
    expect(loadResult).toMatch(/^Skill exam-mode-tuner .*is loaded/);
    const loads = events.flatMap((e) =>
      e.type === 'tool.end' && e.name.startsWith('load_')
        ? [{ name: e.name, result: e.result as Record<string, unknown> }]
        : [],
    );
    const hash = expect.stringMatching(/^[0-9a-f]{64}$/);
    expect(loads[0]).toEqual({ name: 'load_skill', result: { skill: exam, hash, chars: loadResult.length } });
    expect(loads.find((load) => load.result.subskill === 'adaptive-difficulty')).toEqual({
      name: 'load_subskill',
      result: { skill: exam, subskill: 'adaptive-difficulty', hash, chars: adaptResult.length },
    });
    expect(JSON.stringify(events)).not.toContain(loadResult.slice(0, 200));
    const steps = events.filter((e) => e.type === 'step').map((e) => (e.type === 'step' ? e.step : null));
    expect(steps).toEqual([
      null,
      'checkpoint:exam_params',
      'question-generation',
      'adaptive-difficulty',
      'performance-analytics',
      'checkpoint:post_exam_routing',
    ]);
    const description = await env.client.workflow.getHandle(turnId).describe();
    expect(description.searchAttributes.SkillflowSkill).toEqual([exam]);
    expect(description.searchAttributes.SkillflowStep).toEqual(['checkpoint:post_exam_routing']);
  });

  it('refuses skipped steps, an early answer, steps out of order and a route the human did not choose', async () => {
    fake.enqueue(
      { content: [loadSkill()] },
      { content: [subskill('question-generation')] }, // skip exam_params
      { content: [text('Here is your exam result: 90%.')] }, // finish early
      { content: [examParams()] },
      { content: [subskill('performance-analytics')] }, // out of order
      { content: [subskill('question-generation')] },
      { content: [ask('question_1', 'question')] },
      { content: [subskill('adaptive-difficulty')] },
      { content: [subskill('performance-analytics')] },
      { content: [handIn()] },
      { content: [routing()] },
      { content: [loadSkill('study-guide-creator')] }, // not what the human chose
      { content: [text('Starting the coach next time.')] },
    );
    const turnId = await api.startTurn('exam me');
    const params = await api.pending(turnId);
    await api.answer(turnId, params.id, { action: 'approve' });
    const q1 = await api.pending(turnId, params.id);
    await api.answer(turnId, q1.id, { action: 'answer', answer: 'x' });
    const route = await api.pending(turnId, q1.id);
    await api.answer(turnId, route.id, { action: 'choose', choice: routes.coach });
    expect(await api.finished(turnId)).toMatchObject({ status: 'completed', output: 'Starting the coach next time.' });

    const [skipped] = resultsIn(fake.requests[2].body);
    expect(skipped).toEqual([
      'Not allowed now: step question-generation of exam-mode-tuner. Allowed next: checkpoint exam_params (request_human_approval with checkpoint "exam_params").',
      true,
    ]);
    expect(textsIn(fake.requests[3].body).at(-1)).toMatch(
      /^Your answer cannot be accepted yet: the plan of skill exam-mode-tuner is not complete\. Remaining: checkpoint:exam_params → question-generation/,
    );
    expect(resultsIn(fake.requests[5].body)[0]).toEqual([
      expect.stringMatching(
        /^Not allowed now: step performance-analytics of exam-mode-tuner\. Allowed next: step question-generation/,
      ),
      true,
    ]);
    expect(resultsIn(fake.requests[12].body)[0]).toEqual([
      'The human chose memory-comprehension-coach at post_exam_routing; only that skill may be loaded now.',
      true,
    ]);
  });

  it('a routing choice allows loading exactly the chosen skill, which starts its own plan', async () => {
    fake.enqueue(
      { content: [loadSkill()] },
      { content: [examParams()] },
      { content: [subskill('question-generation')] },
      { content: [subskill('adaptive-difficulty')] },
      { content: [subskill('performance-analytics')] },
      { content: [routing()] },
      { content: [loadSkill('memory-comprehension-coach')] },
      { content: [text('Coach loaded; see you next time.')] },
      { content: [ask('focus_areas', 'approval', { params: { concepts: ['trees'] } })] },
      { content: [text('Stopped before coaching.')] },
    );
    const turnId = await api.startTurn('exam then coach');
    const params = await api.pending(turnId);
    await api.answer(turnId, params.id, { action: 'approve' });
    const route = await api.pending(turnId, params.id);
    await api.answer(turnId, route.id, { action: 'choose', choice: routes.coach });
    const focus = await api.pending(turnId, route.id);
    expect(focus.name).toBe('focus_areas');
    expect((await api.turn(turnId)).body).toMatchObject({ skill: 'memory-comprehension-coach' });
    await api.answer(turnId, focus.id, { action: 'cancel' });
    const done = await api.finished(turnId);
    expect(resultsIn(fake.requests[7].body)[0]).toEqual([
      expect.stringMatching(/^Skill memory-comprehension-coach/),
      false,
    ]);
    expect(textsIn(fake.requests[8].body).at(-1)).toMatch(
      /^Your answer cannot be accepted yet: the plan of skill memory-comprehension-coach is not complete/,
    );
    expect(done).toMatchObject({ status: 'cancelled', output: 'Stopped before coaching.' });
  });

  it('fails with plan_violations, naming the skill and step, when the model keeps breaking the plan', async () => {
    fake.enqueue({ content: [loadSkill()] }, { content: [text('Done!')] }, { content: [text('Really done!')] });
    const { app: limited } = await buildTestApp(env.client, queue, { SKILLFLOW_MAX_PLAN_VIOLATIONS: '2' });
    try {
      const limitedApi = new ApiDriver(limited);
      const turnId = await limitedApi.startTurn('exam');
      const done = await limitedApi.finished(turnId);
      expect(done).toMatchObject({ status: 'failed', reason: 'plan_violations', error: { code: 'plan_violations' } });
      expect(done.error.message).toBe(
        'The model broke the plan of skill exam-mode-tuner at its start 2 times; the turn was stopped. Remaining: checkpoint:exam_params → question-generation → adaptive-difficulty → performance-analytics → checkpoint:post_exam_routing.',
      );
    } finally {
      await limited.close();
    }
  });

  it('the round budget inside a plan fails the turn and keeps the plan for the next turn', async () => {
    const { app: tight } = await buildTestApp(env.client, queue, { SKILLFLOW_MAX_ROUNDS: '3' });
    try {
      fake.enqueue(
        { content: [loadSkill()] },
        { content: [toolUse('list_skills', {})] },
        { content: [toolUse('list_skills', {})] },
      );
      const tightApi = new ApiDriver(tight);
      const turnId = await tightApi.startTurn('spin');
      const done = await tightApi.finished(turnId);
      expect(done).toMatchObject({
        status: 'failed',
        reason: 'max_rounds',
        skill: exam,
        error: { code: 'max_rounds' },
      });
      expect(done.error.message).toBe(
        "The round budget ran out in skill exam-mode-tuner; the plan is kept for the session's next turn. Remaining: checkpoint:exam_params → question-generation → adaptive-difficulty → performance-analytics → checkpoint:post_exam_routing.",
      );
      expect(fake.requests).toHaveLength(3);
    } finally {
      await tight.close();
    }
  });

  it('moves the exam to the analytics when the approved time limit passes, and says so', async () => {
    fake.enqueue(
      { content: [loadSkill()] },
      { content: [examParams({ time_limit_min: 2 })] },
      { content: [subskill('question-generation')] },
      { content: [ask('question_1', 'question')] },
      { content: [subskill('adaptive-difficulty')] }, // after the deadline: refused
      { content: [subskill('performance-analytics')] },
      { content: [handIn()] },
      { content: [routing()] },
      { content: [text('Time was up; here is your report.')] },
    );
    const turnId = await shortApi.startTurn('timed exam');
    const params = await shortApi.pending(turnId);
    await shortApi.answer(turnId, params.id, { action: 'approve' });
    const q1 = await shortApi.pending(turnId, params.id);
    expect(Date.parse(q1.expiresAt!) - Date.parse(q1.requestedAt)).toBeLessThanOrEqual(2_000);
    const route = await shortApi.pending(turnId, q1.id);
    await shortApi.answer(turnId, route.id, { action: 'choose', choice: routes.stop });
    expect(await shortApi.finished(turnId)).toMatchObject({
      status: 'completed',
      output: 'Time was up; here is your report.',
    });

    const afterQuestion = fake.requests[4].body;
    expect(resultsIn(afterQuestion)[0][0]).toContain('"skipped":true');
    expect(textsIn(afterQuestion)).toContain(
      'The time limit of exam-mode-tuner has passed. Ask no more questions; go straight to step performance-analytics (load_subskill with skill "exam-mode-tuner" and subskill "performance-analytics").',
    );
    expect(resultsIn(fake.requests[5].body)[0]).toEqual([
      expect.stringMatching(
        /^Not allowed now: step adaptive-difficulty of exam-mode-tuner\. The time limit has passed/,
      ),
      true,
    ]);
  });

  it("continues an exam interrupted by an expired checkpoint in the session's next turn", async () => {
    fake.enqueue({ content: [loadSkill()] }, { content: [examParams()] });
    const sessionId = await shortApi.createSession();
    const first = (await shortApi.sendMessage(sessionId, { message: 'exam please' })).body.id;
    await shortApi.pending(first);
    expect(await shortApi.finished(first)).toMatchObject({ status: 'cancelled', reason: 'expired', skill: exam });
    // The plan goes to the session naming its pinned skill, not holding it; the next turn reads it back.
    const carried = ((await env.client.workflow.getHandle(first).result()) as TurnResult).plan!;
    expect(carried).toMatchObject({
      version: 3,
      skills: [{ name: exam, hash: expect.stringMatching(/^[0-9a-f]{64}$/) }],
      snapshots: [],
    });

    fake.enqueue(
      { content: [loadSkill()] },
      { content: [examParams()] },
      { content: [text('Resumed where we were.')] },
      { content: [subskill('question-generation')] },
      { content: [ask('question_1', 'question')] },
      { content: [subskill('adaptive-difficulty')] },
      { content: [subskill('performance-analytics')] },
      { content: [handIn()] },
      { content: [routing()] },
      { content: [text('Finished the resumed exam.')] },
    );
    const second = (await shortApi.sendMessage(sessionId, { message: 'continue my exam' })).body.id;
    const params = await shortApi.pending(second);
    expect(params.name).toBe('exam_params');
    const firstRequest = fake.requests[2].body;
    expect(textsIn(firstRequest).join('\n')).toContain(
      'You are in the middle of skill exam-mode-tuner. Remaining: checkpoint:exam_params → question-generation',
    );
    await shortApi.answer(second, params.id, { action: 'approve' });
    const q1 = await shortApi.pending(second, params.id);
    await shortApi.answer(second, q1.id, { action: 'answer', answer: 'y' });
    const route = await shortApi.pending(second, q1.id);
    await shortApi.answer(second, route.id, { action: 'choose', choice: routes.stop });
    expect(await shortApi.finished(second)).toMatchObject({
      status: 'completed',
      output: 'Finished the resumed exam.',
    });
    expect(resultsIn(fake.requests[4].body)).toEqual([['{"approved":true}', false]]);
    expect(textsIn(fake.requests[5].body).at(-1)).toMatch(/^Your answer cannot be accepted yet/);
  });
});
