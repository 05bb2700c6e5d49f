import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { turnEventsQuery } from '../workflows/definitions';
import { buildTestApp } from './support/api';
import { bundledSkillsDir, testDeps } from './support/deps';
import { text, toolUse, type FakeAnthropic, type MessagesRequestBody } from './support/fake-anthropic';
import { useWorkerHarness } from './support/harness';
import { examOutput } from './support/exam-script';
import { ApiDriver } from './support/scenario';
import type { TemporalTestEnv } from './support/temporal';

/**
 * The plan and skill defects the policy core removed (issue 10, section 2), each through the API on the real dev
 * server. Every test here failed on the code before the policy core.
 */

const exam = 'exam-mode-tuner';
const coach = 'memory-comprehension-coach';
const loadSkill = (name = exam) => toolUse('load_skill', { name });
const subskill = (name: string, skill = exam) => toolUse('load_subskill', { skill, subskill: name });
const ask = (checkpoint: string, kind: 'approval' | 'question', extra: Record<string, unknown> = {}) =>
  toolUse('request_human_approval', { checkpoint, summary: `About ${checkpoint}`, kind, ...extra });
const examParams = (params: Record<string, unknown> = {}) =>
  ask('exam_params', 'approval', {
    params: { question_count: 2, time_limit_min: 35, concepts: ['arrays'], ...params },
  });
const routing = () => ask('post_exam_routing', 'approval');
const routes = { coach: '→ memory-comprehension-coach (consolidate weak areas)', stop: 'Stop here' };
const haiku = 'Autumn leaves falling / the pond keeps every secret / a frog breaks the calm';

/** The tool results the model got in a request: [content, isError] in order. */
function resultsIn(body: MessagesRequestBody): Array<[string, boolean]> {
  const last = body.messages[body.messages.length - 1] as { content: string | Array<Record<string, unknown>> };
  if (typeof last.content === 'string') return [];
  return last.content.filter((b) => b.type === 'tool_result').map((b) => [String(b.content), b.is_error === true]);
}
const allText = (body: MessagesRequestBody) => JSON.stringify(body.messages);

/**
 * The bundled library with the changes a test needs: `edits` maps a skill to replacements in its skillflow.yaml, and
 * the skill folders of `extra` are added.
 */
function libraryWith(edits: Record<string, Array<[string | RegExp, string]>>, extra: string[] = []): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-defects-'));
  fs.cpSync(bundledSkillsDir, dir, { recursive: true });
  for (const folder of extra) fs.cpSync(folder, path.join(dir, path.basename(folder)), { recursive: true });
  for (const [skill, replacements] of Object.entries(edits)) {
    const file = path.join(dir, skill, 'skillflow.yaml');
    let yaml = fs.readFileSync(file, 'utf8');
    for (const [from, to] of replacements) {
      const next = yaml.replace(from, to);
      if (next === yaml) throw new Error(`no ${from} in ${skill}/skillflow.yaml`);
      yaml = next;
    }
    fs.writeFileSync(file, yaml);
  }
  return dir;
}

/** An exam up to its routing checkpoint, and the human's choice there. */
const examToRouting = () => [
  { content: [loadSkill()] },
  { content: [examParams()] },
  { content: [subskill('question-generation')] },
  { content: [subskill('adaptive-difficulty')] },
  { content: [subskill('performance-analytics')] },
  { content: [toolUse('submit_output', { output: examOutput(2) })] },
  { content: [text('You scored 100%.'), routing()] },
];

describe('defects the policy core removed', () => {
  const harness = useWorkerHarness('defects');
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let app: FastifyInstance;
  let api: ApiDriver;
  let queue: string;
  const apps: FastifyInstance[] = [];

  beforeAll(async () => {
    ({ env, fake, taskQueue: queue } = harness);
    ({ app } = await buildTestApp(env.client, queue));
    api = new ApiDriver(app);
  });
  harness.closeFirst(async () => {
    await app?.close();
    for (const other of apps) await other.close();
  });

  /** An API (and a worker) over a library with some skills changed, on a task queue of its own. */
  async function apiWith(
    edits: Record<string, Array<[string | RegExp, string]>>,
    extra: string[] = [],
  ): Promise<ApiDriver> {
    const taskQueue = env.newTaskQueue('defects-lib');
    await env.startWorker(taskQueue, testDeps(fake.url, { skillsDir: libraryWith(edits, extra) }));
    const built = (await buildTestApp(env.client, taskQueue)).app;
    apps.push(built);
    return new ApiDriver(built);
  }

  async function examAnsweredAt(driver: ApiDriver, sessionId: string, choice: string): Promise<string> {
    const turnId = (await driver.sendMessage(sessionId, { message: 'Give me a practice test.' })).body.id;
    const params = await driver.pending(turnId);
    await driver.answer(turnId, params.id, { action: 'approve' });
    const route = await driver.pending(turnId, params.id);
    expect((await driver.answer(turnId, route.id, { action: 'choose', choice })).code).toBe(200);
    return turnId;
  }

  describe('2.1 a routing choice belongs to the plan that asked for it', () => {
    it('exam, "Stop here": the session\'s next turn loads simple-writing and completes', async () => {
      fake.enqueue(...examToRouting(), { content: [text('Well done. Come back any time.')] });
      const sessionId = await api.createSession();
      const examTurn = await examAnsweredAt(api, sessionId, routes.stop);
      expect(await api.finished(examTurn)).toMatchObject({ status: 'completed' });

      fake.enqueue({ content: [loadSkill('simple-writing')] }, { content: [text(haiku)] });
      const next = (await api.sendMessage(sessionId, { message: 'Write me a haiku about autumn.' })).body.id;
      expect(await api.finished(next)).toMatchObject({ status: 'completed', output: haiku });
      const [loaded] = resultsIn(fake.requests.at(-1)!.body);
      expect(loaded).toEqual([expect.stringMatching(/^Skill simple-writing .*is loaded/), false]);
    });

    it("exam, choose the coach: the coach's plan starts in the same turn; a later turn is free", async () => {
      fake.enqueue(
        ...examToRouting(),
        { content: [loadSkill(coach)] },
        { content: [ask('focus_areas', 'approval', { params: { concepts: ['trees'] } })] },
        { content: [subskill('explain-concept', coach)] },
        { content: [subskill('retrieval-drill', coach)] },
        { content: [subskill('review-schedule', coach)] },
        {
          content: [
            toolUse('submit_output', {
              output: { concepts: [{ name: 'trees', rating: 'shaky' }], schedule: [], cards: [] },
            }),
          ],
        },
        { content: [text('Your review schedule is ready.')] },
      );
      const sessionId = await api.createSession();
      const examTurn = await examAnsweredAt(api, sessionId, routes.coach);
      const focus = await api.pending(examTurn, 'cp-2');
      expect(focus.name).toBe('focus_areas');
      expect((await api.turn(examTurn)).body).toMatchObject({ skill: coach, step: null });
      await api.answer(examTurn, focus.id, { action: 'approve' });
      expect(await api.finished(examTurn)).toMatchObject({
        status: 'completed',
        skill: coach,
        step: 'review-schedule',
      });

      fake.enqueue({ content: [loadSkill('simple-writing')] }, { content: [text(haiku)] });
      const later = (await api.sendMessage(sessionId, { message: 'Now a haiku, please.' })).body.id;
      expect(await api.finished(later)).toMatchObject({ status: 'completed', output: haiku });
      expect(resultsIn(fake.requests.at(-1)!.body)[0][1]).toBe(false);
    });

    it('a chosen skill not loaded in its turn is passed to the next turn as a note, and does not lock the session', async () => {
      fake.enqueue(...examToRouting(), { content: [text('We will start the coach next time.')] });
      const sessionId = await api.createSession();
      const examTurn = await examAnsweredAt(api, sessionId, routes.coach);
      expect(await api.finished(examTurn)).toMatchObject({ status: 'completed' });

      fake.enqueue({ content: [loadSkill('simple-writing')] }, { content: [text(haiku)] });
      const next = (await api.sendMessage(sessionId, { message: 'Before that, a haiku.' })).body.id;
      expect(await api.finished(next)).toMatchObject({ status: 'completed', output: haiku });
      const [first, second] = fake.requests.slice(-2).map((request) => request.body);
      expect(allText(first)).toContain(
        `at post_exam_routing, the human chose ${coach} as the next skill and it was not loaded yet`,
      );
      expect(resultsIn(second)[0]).toEqual([expect.stringMatching(/^Skill simple-writing /), false]);
    });
  });

  it('2.2 a model that keeps asking for checkpoints out of order is stopped at SKILLFLOW_MAX_PLAN_VIOLATIONS', async () => {
    const { app: limited } = await buildTestApp(env.client, queue, { SKILLFLOW_MAX_PLAN_VIOLATIONS: '2' });
    apps.push(limited);
    const driver = new ApiDriver(limited);
    fake.enqueue({ content: [loadSkill()] }, { content: [routing()] }, { content: [routing()] });
    const turnId = await driver.startTurn('route me first');
    const done = await driver.finished(turnId);
    expect(done).toMatchObject({ status: 'failed', reason: 'plan_violations', error: { code: 'plan_violations' } });
    expect(done.error.message).toBe(
      'The model broke the plan of skill exam-mode-tuner at its start 2 times; the turn was stopped. Remaining: checkpoint:exam_params → question-generation → adaptive-difficulty → performance-analytics → checkpoint:post_exam_routing.',
    );
    expect(fake.requests).toHaveLength(3);
  });

  it('2.3 the spec\'s own example skill (metadata version "1.0") is in the catalog and loads', async () => {
    const specExamples = path.resolve(__dirname, 'fixtures', 'skills', 'spec-examples');
    const driver = await apiWith({}, [
      path.join(specExamples, 'pdf-processing'),
      path.join(specExamples, 'data-analysis'),
    ]);
    fake.enqueue({ content: [loadSkill('pdf-processing')] }, { content: [text('Ready to process your PDFs.')] });
    const turnId = await driver.startTurn('Merge these PDFs.');
    expect(await driver.finished(turnId)).toMatchObject({ status: 'completed' });
    expect(JSON.stringify(fake.requests[0].body.system)).toContain('pdf-processing');
    expect(resultsIn(fake.requests[1].body)[0]).toEqual([
      expect.stringMatching(/^Skill pdf-processing \(version 1\.0\) is loaded\./),
      false,
    ]);
  });

  describe('2.4 limits.max-iterations, limits.timeout and approve-defaults do what they say', () => {
    it('max-iterations: 3 ends the turn failed (skill_limit), naming skill and limit; the plan goes on next turn', async () => {
      const driver = await apiWith({ [exam]: [['max-iterations: 200', 'max-iterations: 3']] });
      fake.enqueue(
        { content: [loadSkill()] },
        { content: [examParams()] },
        { content: [subskill('question-generation')] },
        { content: [ask('question_1', 'question')] },
      );
      const sessionId = await driver.createSession();
      const turnId = (await driver.sendMessage(sessionId, { message: 'exam' })).body.id;
      const params = await driver.pending(turnId);
      await driver.answer(turnId, params.id, { action: 'approve' });
      const q1 = await driver.pending(turnId, params.id);
      await driver.answer(turnId, q1.id, { action: 'answer', answer: 'x' });
      const done = await driver.finished(turnId);
      expect(done).toMatchObject({
        status: 'failed',
        reason: 'skill_limit',
        skill: exam,
        step: 'question-generation',
        error: { code: 'skill_limit' },
      });
      expect(done.error.message).toBe(
        "Skill exam-mode-tuner reached its limit of 3 model rounds (limits.max-iterations: 3); the turn was stopped. The plan is kept for the session's next turn. Remaining: adaptive-difficulty → performance-analytics → checkpoint:post_exam_routing.",
      );
      expect(fake.requests).toHaveLength(4);

      fake.enqueue(
        { content: [text('Picking up where we were.'), loadSkill()] },
        { content: [subskill('adaptive-difficulty')] },
        { content: [ask('question_2', 'question')] },
      );
      const next = (await driver.sendMessage(sessionId, { message: 'go on' })).body.id;
      await driver.pending(next);
      expect(allText(fake.requests[4].body)).toContain(
        'You are in the middle of skill exam-mode-tuner; the last step done was question-generation.',
      );
      expect((await driver.turn(next)).body).toMatchObject({ skill: exam, step: 'adaptive-difficulty' });
    });

    it("timeout counts the skill's active time, not the time a human takes to answer", async () => {
      const driver = await apiWith({ [exam]: [['timeout: 5h', 'timeout: 3s']] });
      fake.enqueue(
        { content: [loadSkill()] },
        { content: [examParams()] },
        { content: [text('Planning the questions carefully.'), subskill('question-generation')], delayMs: 400 },
      );
      const turnId = await driver.startTurn('a timed exam');
      const params = await driver.pending(turnId);
      await new Promise((resolve) => setTimeout(resolve, 3_500)); // the human takes longer than the skill's whole timeout
      await driver.answer(turnId, params.id, { action: 'approve' });
      const done = await driver.finished(turnId, 30_000);
      expect(done).toMatchObject({ status: 'failed', reason: 'skill_limit', step: 'question-generation' });
      expect(done.error.message).toMatch(
        /^Skill exam-mode-tuner reached its limit of 3s of active time \(limits.timeout: 3s; time waiting for a human does not count\); the turn was stopped\./,
      );
      expect(fake.requests).toHaveLength(3);
    });

    it('approve-defaults approves the proposed params with the declared defaults for those left out', async () => {
      const driver = await apiWith({
        [coach]: [
          [
            /focus_areas:\n {4}kind: approval\n {4}ttl: 30m\n {4}on-timeout: cancel/,
            'focus_areas:\n    kind: approval\n    ttl: 1s\n    on-timeout: approve-defaults',
          ],
          [/(concepts:\n {8}type: array\n {8}items: string\n)/, '$1        default: []\n'],
        ],
      });
      fake.enqueue(
        { content: [loadSkill(coach)] },
        { content: [ask('focus_areas', 'approval', { params: { concepts: ['trees'] } })] },
        { content: [text('Defaults it is.'), subskill('explain-concept', coach)] },
        { content: [text('Enough for today.')] },
      );
      const turnId = await driver.startTurn('coach me');
      await driver.finished(turnId, 30_000);
      const [expiredResult] = resultsIn(fake.requests[2].body);
      expect(JSON.parse(expiredResult[0])).toEqual({
        approved: true,
        defaulted: true,
        params: { concepts: ['trees'], session_minutes: 20, depth: 'deep' },
        note: 'Nobody answered in time: the proposed params stand, with the declared defaults for any left out.',
      });
    });
  });

  describe('2.5 overrides are checked against the params the skill declares', () => {
    it('a 400 names the parameter, the rule and the allowed values, and the checkpoint stays pending', async () => {
      fake.enqueue(
        { content: [loadSkill()] },
        { content: [examParams()] },
        { content: [text('Fifteen questions it is.')] },
      );
      const turnId = await api.startTurn('exam');
      const pending = await api.pending(turnId);
      expect(pending.actions).toEqual(['approve', 'modify', 'cancel']);
      expect(pending.paramsSchema).toMatchObject({
        type: 'object',
        additionalProperties: false,
        properties: {
          question_count: { type: 'integer', minimum: 1, maximum: 50 },
          types: { type: 'array', items: { enum: ['choice', 'fill_blank', 'short_answer', 'essay'] } },
        },
      });

      const tooMany = await api.answer(turnId, pending.id, { action: 'modify', overrides: { question_count: 500 } });
      expect(tooMany).toEqual({
        code: 400,
        body: {
          error: {
            code: 'invalid_decision',
            message: 'overrides.question_count is 500, above the maximum 50.',
            details: [
              {
                path: 'overrides.question_count',
                rule: 'maximum',
                allowed: { minimum: 1, maximum: 50 },
                message: 'overrides.question_count is 500, above the maximum 50',
              },
            ],
            requestId: expect.any(String),
          },
        },
      });
      const bogusTypes = await api.answer(turnId, pending.id, {
        action: 'modify',
        overrides: { types: ['bogus', 42] },
      });
      expect(bogusTypes.code).toBe(400);
      expect(bogusTypes.body.error.details).toEqual([
        {
          path: 'overrides.types[0]',
          rule: 'enum',
          allowed: ['choice', 'fill_blank', 'short_answer', 'essay'],
          message: 'overrides.types[0] is "bogus", not one of "choice", "fill_blank", "short_answer", "essay"',
        },
        {
          path: 'overrides.types[1]',
          rule: 'type',
          allowed: 'string',
          message: 'overrides.types[1] is a number, not a string',
        },
      ]);
      const negative = await api.answer(turnId, pending.id, { action: 'modify', overrides: { time_limit_min: -5 } });
      expect(negative.body.error.details).toEqual([
        {
          path: 'overrides.time_limit_min',
          rule: 'minimum',
          allowed: { minimum: 1, maximum: 240 },
          message: 'overrides.time_limit_min is -5, below the minimum 1',
        },
      ]);
      expect((await api.turn(turnId)).body).toMatchObject({ status: 'waiting', pendingCheckpoint: { id: pending.id } });

      expect((await api.answer(turnId, pending.id, { action: 'modify', overrides: { question_count: 15 } })).code).toBe(
        200,
      );
      await api.finished(turnId);
      expect(JSON.parse(resultsIn(fake.requests[2].body)[0][0])).toEqual({
        approved: true,
        overrides: { question_count: 15 },
      });
    });

    it("the model's own proposal is checked too: out-of-range params never reach a human", async () => {
      fake.enqueue(
        { content: [loadSkill()] },
        { content: [examParams({ question_count: 500, time_limit_min: -5 })] },
        { content: [examParams()] },
      );
      const turnId = await api.startTurn('a huge exam');
      const pending = await api.pending(turnId);
      expect(pending.params).toMatchObject({
        question_count: 2,
        time_limit_min: 35,
        difficulty: 'adaptive',
        types: ['choice', 'fill_blank', 'short_answer'],
      });
      const [refused, isError] = resultsIn(fake.requests[2].body)[0];
      expect(isError).toBe(true);
      expect(refused).toMatch(
        /^Checkpoint exam_params was not asked: params.question_count is 500, above the maximum 50; params.time_limit_min is -5, below the minimum 1\./,
      );
      fake.enqueue({ content: [text('Cancelled.')] });
      await api.answer(turnId, pending.id, { action: 'cancel' });
      await api.finished(turnId);
    });
  });

  it('2.6 a modify may carry a note in plain words, alone or with overrides; the model receives it', async () => {
    const proposal = (count: number) =>
      ask('quiz_setup', 'approval', { params: { question_count: count, types: ['choice', 'essay'] } });
    fake.enqueue({ content: [proposal(10)] }, { content: [proposal(15)] }, { content: [text('Twelve, no essays.')] });
    const turnId = await api.startTurn('quiz me');
    const first = await api.pending(turnId);
    expect(
      (await api.answer(turnId, first.id, { action: 'modify', note: 'make it 15 questions, no essays' })).code,
    ).toBe(200);
    const second = await api.pending(turnId, first.id);
    expect(
      (
        await api.answer(turnId, second.id, {
          action: 'modify',
          overrides: { question_count: 12 },
          note: 'actually twelve',
        })
      ).code,
    ).toBe(200);
    await api.finished(turnId);
    expect(JSON.parse(resultsIn(fake.requests[1].body)[0][0])).toEqual({
      approved: true,
      note: 'make it 15 questions, no essays',
    });
    expect(JSON.parse(resultsIn(fake.requests[2].body)[0][0])).toEqual({
      approved: true,
      overrides: { question_count: 12 },
      note: 'actually twelve',
    });
    const events = await env.client.workflow.getHandle(turnId).query(turnEventsQuery, 0);
    expect(
      events
        .filter((e) => e.type === 'checkpoint.resolved')
        .map((e) => (e.type === 'checkpoint.resolved' ? e.action : '')),
    ).toEqual(['modify', 'modify']);
  });

  it("2.7 by default a checkpoint waits without a deadline; a skill's own limit stays", async () => {
    fake.enqueue({ content: [ask('anything', 'approval')] }, { content: [text('ok')] });
    const turnId = await api.startTurn('ask me');
    const pending = await api.pending(turnId);
    expect(pending.expiresAt).toBeNull();
    await api.answer(turnId, pending.id, { action: 'approve' });
    await api.finished(turnId);

    fake.enqueue(
      { content: [loadSkill()] },
      { content: [examParams()] },
      { content: [subskill('question-generation')] },
      { content: [ask('question_1', 'question')] },
      { content: [text('Stopped.')] },
    );
    const examTurn = await api.startTurn('exam');
    const params = await api.pending(examTurn);
    expect(Date.parse(params.expiresAt!) - Date.parse(params.requestedAt)).toBe(30 * 60_000);
    await api.answer(examTurn, params.id, { action: 'approve' });
    const question = await api.pending(examTurn, params.id);
    expect(Date.parse(question.expiresAt!) - Date.parse(question.requestedAt)).toBe(15 * 60_000);
    await api.answer(examTurn, question.id, { action: 'cancel' });
    await api.finished(examTurn);
  });
});
