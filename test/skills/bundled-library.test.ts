import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { compilePlan, jumpToStep, allowedNext, type SkillManifest } from '../../core/skills';
import { validateSkillLibrary } from '../../lib/skills';
import { bundledSkills, registryFor } from './helpers';

const names = [
  'code-review',
  'exam-mode-tuner',
  'figure-check',
  'memory-comprehension-coach',
  'simple-writing',
  'study-guide-creator',
  'task-planning',
];

describe('the bundled skill library', () => {
  let manifests: Map<string, SkillManifest>;
  beforeAll(async () => {
    const report = await validateSkillLibrary(bundledSkills);
    expect(report.problems).toEqual([]);
    manifests = new Map(report.skills.map((s) => [s.folder, s.manifest as SkillManifest]));
  });

  it('validates under skillflow rules with no error and no warning', () => {
    expect([...manifests.keys()]).toEqual(names);
    for (const manifest of manifests.values()) expect(manifest).not.toBeNull();
  });

  describe.each(names)('%s follows the Agent Skills spec on its own terms', (name) => {
    const folder = path.join(bundledSkills, name);
    const text = fs.readFileSync(path.join(folder, 'SKILL.md'), 'utf8');
    const match = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text);

    it('has YAML front matter with only the spec fields, string metadata and valid name and description', () => {
      expect(match).not.toBeNull();
      const data = parseYaml((match as RegExpExecArray)[1]) as Record<string, unknown>;
      expect(
        Object.keys(data).every((k) =>
          ['name', 'description', 'license', 'compatibility', 'metadata', 'allowed-tools'].includes(k),
        ),
      ).toBe(true);
      expect(data.name).toBe(name);
      expect(name).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(name.length).toBeLessThanOrEqual(64);
      expect(typeof data.description).toBe('string');
      const description = data.description as string;
      expect(description.length).toBeGreaterThan(0);
      expect(description.length).toBeLessThanOrEqual(1024);
      expect(description).not.toMatch(/[<>]/);
      for (const value of Object.values((data.metadata ?? {}) as Record<string, unknown>))
        expect(typeof value).toBe('string');
    });

    it('keeps its body under 500 lines and has no nested SKILL.md', () => {
      expect((match as RegExpExecArray)[2].split('\n').length).toBeLessThan(500);
      const nested = (fs.readdirSync(folder, { recursive: true }) as string[]).filter(
        (f) => path.basename(f).toLowerCase() === 'skill.md' && f !== 'SKILL.md',
      );
      expect(nested).toEqual([]);
    });
  });

  it('runs the exam as seed 000 describes: parameters, checkpoints, per-answer step, deadline and routing', () => {
    const exam = manifests.get('exam-mode-tuner') as SkillManifest;
    expect(exam.plan?.source).toBe(
      'checkpoint:exam_params question-generation adaptive-difficulty+ performance-analytics checkpoint:post_exam_routing',
    );
    expect(exam.subskills).toEqual(['adaptive-difficulty', 'performance-analytics', 'question-generation']);
    const params = exam.checkpoints.find((c) => c.name === 'exam_params');
    expect(params?.params.map((p) => p.name)).toEqual([
      'question_count',
      'types',
      'difficulty',
      'time_limit_min',
      'concepts',
    ]);
    const routing = exam.checkpoints.find((c) => c.name === 'post_exam_routing');
    expect(routing?.routes.map((r) => [r.id, r.skill])).toEqual([
      ['memory-comprehension-coach', 'memory-comprehension-coach'],
      ['study-guide-creator', 'study-guide-creator'],
      ['exam-mode-tuner', 'exam-mode-tuner'],
      ['stop', null],
    ]);
    expect(routing?.routes.map((r) => r.label)).toEqual([
      '→ memory-comprehension-coach (consolidate weak areas)',
      '→ study-guide-creator (full restudy)',
      '→ exam-mode-tuner again (harder test)',
      'Stop here',
    ]);
    expect(exam.deadlines).toEqual([
      {
        source: { kind: 'param', checkpoint: 'exam_params', param: 'time_limit_min', unit: 'minutes' },
        jumpTo: 'performance-analytics',
      },
    ]);
    expect(exam.freeCheckpoints).toEqual({ ttlMs: 15 * 60_000, onTimeout: 'skip' });
    const automaton = compilePlan(exam.plan!.root);
    expect(allowedNext(automaton, jumpToStep(automaton, 'performance-analytics')!)).toEqual([
      { kind: 'step', name: 'performance-analytics' },
    ]);
  });

  it('tells the model to use the engine tools the exam needs', () => {
    const body = fs.readFileSync(path.join(bundledSkills, 'exam-mode-tuner', 'SKILL.md'), 'utf8');
    for (const phrase of [
      'request_human_approval',
      'checkpoint `exam_params`',
      '`kind`: `question`',
      'subskill `adaptive-difficulty`',
      'subskill `performance-analytics`',
      'checkpoint `post_exam_routing`',
      'load_skill',
    ]) {
      expect(body).toContain(phrase);
    }
  });

  it('has at least three typed skills with parameters and an output schema', () => {
    for (const name of ['code-review', 'simple-writing', 'task-planning']) {
      const manifest = manifests.get(name) as SkillManifest;
      expect(manifest.parameters.length).toBeGreaterThan(0);
      expect(manifest.output.length).toBeGreaterThan(0);
      expect(manifest.category).not.toBeNull();
    }
  });

  it('loads every skill into a snapshot', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-bundled-'));
    try {
      const registry = registryFor(bundledSkills, dataDir);
      const catalog = await registry.catalog();
      expect(catalog.skills.map((s) => s.name)).toEqual(names);
      for (const name of names) {
        const snapshot = await registry.snapshot(name);
        expect(snapshot.body.length).toBeGreaterThan(200);
        expect(snapshot.subskills.every((s) => s.body.length > 100)).toBe(true);
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
