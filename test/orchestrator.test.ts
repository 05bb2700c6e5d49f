import os from 'node:os';
import path from 'node:path';
import { SkillRegistry } from '../lib/skills';
import {
  applyDeadline,
  checkCheckpoint,
  checkFinal,
  checkLoadSkill,
  checkSubskill,
  emptyOrchestrator,
  onCheckpointResolved,
  onSkillLoaded,
  onSubskillLoaded,
  remainingSteps,
  resumeNote,
  startFixedDeadlines,
  type OrchestratorState,
} from '../core/orchestrator';
import { buildManifest, ProblemList, type SkillManifest } from '../core/skills';
import { bundledSkillsDir } from './support/deps';

let exam: SkillManifest;
const routeLabels = {
  coach: '→ memory-comprehension-coach (consolidate weak areas)',
  guide: '→ study-guide-creator (full restudy)',
  stop: 'Stop here',
};

beforeAll(async () => {
  const registry = new SkillRegistry({ skillsDir: bundledSkillsDir, storeDir: path.join(os.tmpdir(), `skillflow-orch-${process.pid}`) });
  const catalog = await registry.catalog();
  exam = catalog.skills.find((skill) => skill.name === 'exam-mode-tuner')!;
});

/** A manifest with just a plan (and optional extras), for plan-language cases. */
function planned(plan: string, extra: Partial<SkillManifest> = {}): SkillManifest {
  const problems = new ProblemList('t');
  const subskills = [...new Set(plan.match(/\b[a-z][a-z0-9-]*\b(?!:)/g) ?? [])].filter((word) => word !== 'checkpoint');
  const manifest = buildManifest(
    {
      folder: 't',
      frontmatter: { name: 't', description: 'test skill', metadata: { plan } },
      sidecar: undefined,
      subskills,
      resources: [],
    },
    problems,
  );
  if (!manifest) throw new Error(`bad test manifest: ${JSON.stringify(problems)}`);
  return { ...manifest, ...extra };
}

const load = (manifest: SkillManifest, state = emptyOrchestrator()) => onSkillLoaded(state, manifest);
const step = (state: OrchestratorState, name: string, skill = state.plan!.skill) => {
  expect(checkSubskill(state, skill, name)).toEqual({ ok: true });
  return onSubskillLoaded(state, skill, name);
};
const resolve = (state: OrchestratorState, name: string, decision: Parameters<typeof onCheckpointResolved>[2] = { action: 'approve' }, params: Record<string, unknown> | null = null, now = 0) => {
  expect(checkCheckpoint(state, name)).toEqual({ ok: true });
  return onCheckpointResolved(state, name, decision, params, now);
};
const refused = (verdict: { ok: boolean; message?: string }) => {
  expect(verdict.ok).toBe(false);
  return (verdict as { message: string }).message;
};

describe('the step orchestrator on the exam plan', () => {
  it('refuses every step before exam_params is resolved, naming what is allowed', () => {
    const state = load(exam);
    expect(refused(checkSubskill(state, 'exam-mode-tuner', 'question-generation'))).toBe(
      'Not allowed now: step question-generation of exam-mode-tuner. Allowed next: checkpoint exam_params (request_human_approval with checkpoint "exam_params").',
    );
    expect(refused(checkCheckpoint(state, 'post_exam_routing'))).toContain('Allowed next: checkpoint exam_params');
    expect(refused(checkFinal(state))).toContain('Remaining: checkpoint:exam_params → question-generation → adaptive-difficulty → performance-analytics → checkpoint:post_exam_routing');
  });

  it('walks the whole plan: repetition, free questions, routing', () => {
    let state = load(exam);
    state = resolve(state, 'exam_params', { action: 'approve' }, { time_limit_min: 35 });
    state = step(state, 'question-generation');
    expect(refused(checkSubskill(state, 'exam-mode-tuner', 'performance-analytics'))).toContain('Allowed next: step adaptive-difficulty');
    for (let n = 1; n <= 3; n++) {
      expect(checkCheckpoint(state, `question_${n}`)).toEqual({ ok: true });
      state = step(state, 'adaptive-difficulty');
    }
    expect(state.plan!.stepRuns['adaptive-difficulty']).toBe(3);
    expect(refused(checkSubskill(state, 'exam-mode-tuner', 'question-generation'))).toContain('Not allowed now: step question-generation');
    state = step(state, 'performance-analytics');
    expect(refused(checkFinal(state))).toContain('Remaining: checkpoint:post_exam_routing');
    state = resolve(state, 'post_exam_routing', { action: 'choose', choice: routeLabels.coach });
    expect(checkFinal(state)).toEqual({ ok: true });
    expect(state.route).toEqual({ skill: 'memory-comprehension-coach', from: 'post_exam_routing' });
    expect(checkLoadSkill(state, 'memory-comprehension-coach')).toEqual({ ok: true });
    expect(refused(checkLoadSkill(state, 'study-guide-creator'))).toBe('The human chose memory-comprehension-coach at post_exam_routing; only that skill may be loaded now.');
  });

  it('"Stop here" allows only the final answer; a cancel ends the plan', () => {
    let state = load(exam);
    state = resolve(state, 'exam_params');
    state = step(state, 'question-generation');
    state = step(state, 'adaptive-difficulty');
    state = step(state, 'performance-analytics');
    const stopped = resolve(state, 'post_exam_routing', { action: 'choose', choice: routeLabels.stop });
    expect(stopped.route).toEqual({ skill: null, from: 'post_exam_routing' });
    expect(refused(checkLoadSkill(stopped, 'exam-mode-tuner'))).toContain('chose to stop');
    expect(checkFinal(stopped)).toEqual({ ok: true });

    const cancelled = onCheckpointResolved(load(exam), 'exam_params', { action: 'cancel' }, null, 0);
    expect(cancelled.plan).toBeNull();
    expect(checkFinal(cancelled)).toEqual({ ok: true });
  });

  it('an expired routing checkpoint means stop', () => {
    let state = load(exam);
    state = resolve(state, 'exam_params');
    state = step(state, 'question-generation');
    state = step(state, 'adaptive-difficulty');
    state = step(state, 'performance-analytics');
    state = onCheckpointResolved(state, 'post_exam_routing', 'expired', null, 0);
    expect(state.route).toEqual({ skill: null, from: 'post_exam_routing' });
  });

  it('the deadline comes from the approved (or overridden) time limit and jumps to the analytics', () => {
    let state = load(exam);
    state = resolve(state, 'exam_params', { action: 'modify', overrides: { time_limit_min: 2 } }, { time_limit_min: 35 }, 1_000);
    expect(state.plan!.deadline).toEqual({ atMs: 1_000 + 2 * 60_000, jumpTo: 'performance-analytics' });
    state = step(state, 'question-generation');
    expect(applyDeadline(state, 1_000 + 60_000).message).toBeUndefined();
    const passed = applyDeadline(state, 1_000 + 2 * 60_000);
    expect(passed.message).toBe(
      'The time limit of exam-mode-tuner has passed. Ask no more questions; go straight to step performance-analytics (load_subskill with skill "exam-mode-tuner" and subskill "performance-analytics").',
    );
    state = passed.state;
    expect(refused(checkSubskill(state, 'exam-mode-tuner', 'adaptive-difficulty'))).toContain('The time limit has passed');
    expect(refused(checkCheckpoint(state, 'question_7'))).toContain('ask nothing more');
    state = step(state, 'performance-analytics');
    expect(checkCheckpoint(state, 'post_exam_routing')).toEqual({ ok: true });
    expect(applyDeadline(state, 10 * 60_000).message).toBeUndefined();
  });

  it('another skill cannot be loaded while the plan is unfinished; reloading the same one keeps the position', () => {
    let state = load(exam);
    state = resolve(state, 'exam_params');
    expect(refused(checkLoadSkill(state, 'code-review'))).toContain('Skill exam-mode-tuner is in progress');
    const reloaded = onSkillLoaded(state, exam);
    expect(reloaded.plan!.position).toEqual(state.plan!.position);
  });

  it('step limits are enforced at dispatch', () => {
    let state = load(planned('a b+ c', { stepLimits: [{ step: 'b', maxRuns: 2 }] }));
    state = step(state, 'a');
    state = step(state, 'b');
    state = step(state, 'b');
    expect(refused(checkSubskill(state, 't', 'b'))).toBe('Step b of t has run its limit of 2 times in this plan. Allowed next: step c (load_subskill with skill "t" and subskill "c").');
  });

  it('tells a resuming model where it stands', () => {
    let state = load(exam);
    state = resolve(state, 'exam_params');
    state = step(state, 'question-generation');
    expect(resumeNote(state.plan!)).toBe(
      'You are in the middle of skill exam-mode-tuner; the last step done was question-generation. Remaining: adaptive-difficulty → performance-analytics → checkpoint:post_exam_routing. ' +
        'Allowed next: step adaptive-difficulty (load_subskill with skill "exam-mode-tuner" and subskill "adaptive-difficulty"). Load the skill again with load_skill to read its instructions, then continue from there.',
    );
  });
});

describe('the plan language through the orchestrator', () => {
  it.each([
    ['a b c', ['a', 'b', 'c'], []],
    ['a b? c', ['a', 'c'], ['b']],
    ['a b* c', ['a', 'b', 'b', 'b', 'c'], []],
    ['a (b c)+ d', ['a', 'b', 'c', 'b', 'c', 'd'], ['c']],
    ['a (b | c) d', ['a', 'c', 'd'], []],
    ['checkpoint:go a', ['checkpoint:go', 'a'], ['a']],
  ])('%s accepts %j', (plan, walk, refusedFirst) => {
    let state = load(planned(plan));
    for (const name of refusedFirst) {
      const verdict = name.startsWith('checkpoint:') ? checkCheckpoint(state, name.slice(11)) : checkSubskill(state, 't', name);
      expect(verdict.ok).toBe(false);
    }
    for (const name of walk) state = name.startsWith('checkpoint:') ? resolve(state, name.slice(11)) : step(state, name);
    expect(checkFinal(state)).toEqual({ ok: true });
    expect(remainingSteps(state.plan!)).toEqual([]);
  });

  it('optional and repeated steps do not count as remaining', () => {
    const state = step(load(planned('a b* c? d')), 'a');
    expect(remainingSteps(state.plan!)).toEqual(['d']);
  });

  it('a subskill the plan does not name may be loaded at any time', () => {
    const state = load({ ...planned('a b'), subskills: ['a', 'b', 'glossary'] });
    expect(checkSubskill(state, 't', 'glossary')).toEqual({ ok: true });
  });

  it('fixed deadlines start when the skill is loaded', () => {
    const state = startFixedDeadlines(load(planned('a b c', { deadlines: [{ source: { kind: 'fixed', ms: 5_000 }, jumpTo: 'c' }] })), 100);
    expect(state.plan!.deadline).toEqual({ atMs: 5_100, jumpTo: 'c' });
  });
});
