import fs from 'node:fs';
import path from 'node:path';
import type { SkillValidationError } from '../../core/skills';
import { nodeSkillFileReader, type SkillFileReader } from '../../lib/skills';
import { registryFor, rewrite, scratchCopy } from './helpers';

describe('skill registry', () => {
  let scratch: ReturnType<typeof scratchCopy>;
  beforeEach(() => {
    scratch = scratchCopy();
  });
  afterEach(() => scratch.cleanup());

  it('discovers top-level skills with their manifests; subskills are never top-level skills', async () => {
    const catalog = await registryFor(scratch.skillsDir, scratch.dataDir).catalog();
    expect(catalog.skills.map((s) => s.name)).toEqual(['helper', 'quiz']);
    expect(catalog.disabled).toEqual(['disabled-skill']);
    expect(catalog.problems).toEqual([]);
    const quiz = catalog.skills[1];
    expect(quiz).toEqual({
      name: 'quiz',
      description: 'A small quiz used by the tests. Confirms settings, asks questions, grades each answer and reports.',
      license: 'MIT',
      compatibility: null,
      allowedTools: null,
      metadata: {
        plan: 'checkpoint:settings ask grade+ report? checkpoint:wrap_up',
        category: 'learning',
        tags: 'quiz, test',
        version: '0.1.0',
        author: 'skillflow tests',
      },
      category: 'learning',
      tags: ['quiz', 'test'],
      version: '0.1.0',
      enabled: true,
      plan: {
        source: 'checkpoint:settings ask grade+ report? checkpoint:wrap_up',
        root: {
          kind: 'sequence',
          items: [
            { kind: 'checkpoint', name: 'settings' },
            { kind: 'step', name: 'ask' },
            { kind: 'oneOrMore', item: { kind: 'step', name: 'grade' } },
            { kind: 'optional', item: { kind: 'step', name: 'report' } },
            { kind: 'checkpoint', name: 'wrap_up' },
          ],
        },
        steps: ['ask', 'grade', 'report'],
        checkpoints: ['settings', 'wrap_up'],
      },
      parameters: [
        { name: 'topic', type: 'string', description: 'What the quiz is about.', required: true },
        {
          name: 'rounds',
          type: 'integer',
          description: 'How many questions.',
          required: false,
          default: 3,
          minimum: 1,
        },
      ],
      output: [{ name: 'score', type: 'number', description: 'The score.', required: true }],
      checkpoints: [
        {
          name: 'settings',
          kind: 'approval',
          ttlMs: 600_000,
          onTimeout: 'approve-defaults',
          params: [
            { name: 'minutes', type: 'integer', description: 'Time limit in minutes.', required: false, default: 5 },
          ],
          routes: [],
          inPlan: true,
        },
        {
          name: 'wrap_up',
          kind: 'approval',
          ttlMs: 3_600_000,
          onTimeout: 'skip',
          params: [],
          routes: [
            { id: 'helper', label: 'Get help', skill: 'helper' },
            { id: 'stop', label: 'Stop here', skill: null },
          ],
          inPlan: true,
        },
      ],
      freeCheckpoints: { ttlMs: 300_000, onTimeout: 'skip' },
      deadlines: [
        { source: { kind: 'param', checkpoint: 'settings', param: 'minutes', unit: 'minutes' }, jumpTo: 'report' },
      ],
      stepLimits: [{ step: 'grade', maxRuns: 10 }],
      limits: { maxIterations: 30, timeoutMs: 3_600_000 },
      children: ['helper'],
      tools: ['web_search'],
      subskills: ['ask', 'grade', 'report'],
      resources: ['assets/data.csv', 'references/notes.md'],
    });
    expect(JSON.parse(JSON.stringify(catalog))).toEqual(catalog);
  });

  it('reads only front matter and sidecars at start-up; bodies and subskills wait for load_skill', async () => {
    const reads: string[] = [];
    const recording: SkillFileReader = {
      readFrontmatter: (file, max) => {
        reads.push(`frontmatter ${path.relative(scratch.skillsDir, file)}`);
        return nodeSkillFileReader.readFrontmatter(file, max);
      },
      readFile: (file, root, max) => {
        reads.push(`file ${path.relative(scratch.skillsDir, file)}`);
        return nodeSkillFileReader.readFile(file, root, max);
      },
    };
    const body = path.join(scratch.skillsDir, 'quiz', 'SKILL.md');
    fs.appendFileSync(body, `\n${'Long instructions. '.repeat(2000)}\n`);
    const registry = registryFor(scratch.skillsDir, scratch.dataDir, { reader: recording });
    await registry.catalog();
    expect(reads.sort()).toEqual([
      'file quiz/skillflow.yaml',
      'frontmatter disabled-skill/SKILL.md',
      'frontmatter helper/SKILL.md',
      'frontmatter quiz/SKILL.md',
    ]);
    const head = await nodeSkillFileReader.readFrontmatter(body, 16 * 1024);
    expect(head.text.endsWith('---\n')).toBe(true);
    expect(head.text).not.toContain('# Quiz');

    reads.length = 0;
    await registry.catalog();
    expect(reads).toEqual([]);

    await registry.snapshot('quiz');
    expect(reads.filter((r) => r.startsWith('file')).sort()).toEqual([
      'file quiz/SKILL.md',
      'file quiz/assets/data.csv',
      'file quiz/references/notes.md',
      'file quiz/skillflow.yaml',
      'file quiz/subskills/ask.md',
      'file quiz/subskills/grade.md',
      'file quiz/subskills/report.md',
    ]);
  });

  it('picks up added, edited, disabled and removed skills without a restart', async () => {
    const registry = registryFor(scratch.skillsDir, scratch.dataDir);
    expect((await registry.catalog()).skills.map((s) => s.name)).toEqual(['helper', 'quiz']);

    fs.mkdirSync(path.join(scratch.skillsDir, 'added'));
    fs.writeFileSync(
      path.join(scratch.skillsDir, 'added', 'SKILL.md'),
      '---\nname: added\ndescription: Added later.\n---\n\nBody.\n',
    );
    rewrite(
      path.join(scratch.skillsDir, 'helper', 'SKILL.md'),
      '---\nname: helper\ndescription: Edited description.\n---\n\nHelp.\n',
    );
    rewrite(
      path.join(scratch.skillsDir, 'quiz', 'SKILL.md'),
      fs
        .readFileSync(path.join(scratch.skillsDir, 'quiz', 'SKILL.md'), 'utf8')
        .replace('tags: quiz, test', 'tags: quiz, test\n  enabled: "false"'),
    );
    let catalog = await registry.catalog();
    expect(catalog.skills.map((s) => [s.name, s.description])).toEqual([
      ['added', 'Added later.'],
      ['helper', 'Edited description.'],
    ]);
    expect(catalog.disabled).toEqual(['disabled-skill', 'quiz']);
    await expect(registry.snapshot('quiz')).rejects.toThrow('Skill "quiz" is disabled.');

    fs.rmSync(path.join(scratch.skillsDir, 'added'), { recursive: true });
    catalog = await registry.catalog();
    expect(catalog.skills.map((s) => s.name)).toEqual(['helper']);
  });

  it('skips a skill broken by an edit, and the skills that name it, and keeps serving the others', async () => {
    fs.mkdirSync(path.join(scratch.skillsDir, 'solo'));
    fs.writeFileSync(
      path.join(scratch.skillsDir, 'solo', 'SKILL.md'),
      '---\nname: solo\ndescription: Stands alone.\n---\n\nBody.\n',
    );
    const registry = registryFor(scratch.skillsDir, scratch.dataDir);
    expect((await registry.catalog()).skills.map((s) => s.name)).toEqual(['helper', 'quiz', 'solo']);
    rewrite(path.join(scratch.skillsDir, 'helper', 'SKILL.md'), '---\nname: helper\n---\n\nNo description.\n');
    const catalog = await registry.catalog();
    expect(catalog.skills.map((s) => s.name)).toEqual(['solo']);
    expect(catalog.problems.map((p) => `${p.file} ${p.field} ${p.message}`)).toEqual([
      'helper/SKILL.md description the required field description is missing',
      'quiz/skillflow.yaml children child skill "helper" is not a valid skill of this library',
      'quiz/skillflow.yaml checkpoints.wrap_up.routes.helper route target "helper" is not a valid skill of this library',
    ]);
  });

  it('ignores folders without SKILL.md and survives a missing skills directory', async () => {
    fs.mkdirSync(path.join(scratch.skillsDir, 'notes'));
    fs.writeFileSync(path.join(scratch.skillsDir, 'README.md'), 'Not a skill.');
    const catalog = await registryFor(scratch.skillsDir, scratch.dataDir).catalog();
    expect(catalog.skills.map((s) => s.name)).toEqual(['helper', 'quiz']);
    expect(catalog.problems).toEqual([
      {
        severity: 'warning',
        skill: 'notes',
        file: 'notes/',
        field: '-',
        message: 'the folder has no SKILL.md, so it is not a skill',
        fix: 'add a SKILL.md, or move the folder out of the skills directory.',
      },
    ]);
    const missing = await registryFor(path.join(scratch.root, 'nowhere'), scratch.dataDir).catalog();
    expect(missing.skills).toEqual([]);
    expect(missing.problems[0].message).toBe('the skills directory does not exist, so no skill is available');
  });

  it('reads SKILL.md with a byte order mark and Windows line endings', async () => {
    fs.mkdirSync(path.join(scratch.skillsDir, 'win'));
    fs.writeFileSync(
      path.join(scratch.skillsDir, 'win', 'SKILL.md'),
      '\uFEFF---\r\nname: win\r\ndescription: Windows line endings.\r\n---\r\n\r\n# Win\r\n\r\nBody.\r\n',
    );
    const registry = registryFor(scratch.skillsDir, scratch.dataDir);
    expect((await registry.catalog()).skills.map((s) => s.name)).toEqual(['helper', 'quiz', 'win']);
    expect((await registry.snapshot('win')).body).toBe('# Win\n\nBody.');
  });

  describe('size caps', () => {
    it('warns about a SKILL.md over the advised size and loads it (the spec sets no limit)', async () => {
      const catalog = await registryFor(scratch.skillsDir, scratch.dataDir, {
        limits: { skillFileBytes: 200 },
      }).catalog();
      expect(catalog.problems.find((p) => p.skill === 'quiz')).toEqual(
        expect.objectContaining({
          severity: 'warning',
          file: 'quiz/SKILL.md',
          message: expect.stringMatching(
            /^the file is \d+ bytes, over the advised 200 bytes: every byte of it reaches the model's context$/,
          ),
        }),
      );
      expect(catalog.skills.map((s) => s.name)).toEqual(['helper', 'quiz']);
    });

    it('rejects front matter that is not closed within its cap', async () => {
      const catalog = await registryFor(scratch.skillsDir, scratch.dataDir, {
        limits: { frontmatterBytes: 64 },
      }).catalog();
      expect(catalog.problems.filter((p) => p.file === 'quiz/SKILL.md').map((p) => p.message)).toEqual([
        'the front matter is not closed within 64 bytes',
      ]);
    });

    it('warns about a subskill over the advised size, and rejects too many subskills', async () => {
      let catalog = await registryFor(scratch.skillsDir, scratch.dataDir, { limits: { subskillBytes: 40 } }).catalog();
      expect(catalog.problems.map((p) => `${p.severity} ${p.file}: ${p.message}`)).toEqual([
        "warning quiz/subskills/grade.md: the file is 50 bytes, over the advised 40 bytes: every byte of it reaches the model's context",
      ]);
      catalog = await registryFor(scratch.skillsDir, scratch.dataDir, { limits: { subskillCount: 2 } }).catalog();
      expect(catalog.problems.map((p) => `${p.file}: ${p.message}`)).toContain(
        'quiz/subskills: the skill has 3 subskills; the limit is 2',
      );
    });

    it('leaves a resource over the cap unserved, with a warning', async () => {
      const catalog = await registryFor(scratch.skillsDir, scratch.dataDir, {
        limits: { resourceBytes: 20 },
      }).catalog();
      expect(catalog.problems.map((p) => `${p.severity} ${p.file}: ${p.message}`)).toEqual([
        'warning quiz/references/notes.md: the file is 31 bytes, over the 20 bytes resource limit, so it is never served',
      ]);
      expect(catalog.skills.find((s) => s.name === 'quiz')?.resources).toEqual(['assets/data.csv']);
    });

    it('checks the total on the text as written, before sanitizing any of it', async () => {
      const subskills = path.join(scratch.skillsDir, 'quiz', 'subskills');
      // Each under the limit alone, over it together as written, far under it once sanitized; and a subskill that
      // sanitizing would find empty.
      rewrite(path.join(subskills, 'grade.md'), `Grade the answer.\n<!-- ${'x'.repeat(600)} -->\n`);
      rewrite(path.join(subskills, 'report.md'), `Report the score.\n<!-- ${'y'.repeat(600)} -->\n`);
      rewrite(path.join(subskills, 'ask.md'), '<!-- only a comment -->\n');
      const registry = registryFor(scratch.skillsDir, scratch.dataDir, { limits: { snapshotBytes: 1024 } });
      const refused = await registry
        .snapshot('quiz')
        .catch((error: SkillValidationError) => error.problems.map((p) => `${p.file}: ${p.message}`));
      expect(refused).toEqual([
        expect.stringMatching(
          /^quiz\/subskills: SKILL\.md and its subskills hold 1\.\d KiB of text; the limit is 1 KiB$/,
        ),
      ]);
    });

    it('rejects a snapshot whose text is over the cap', async () => {
      const registry = registryFor(scratch.skillsDir, scratch.dataDir, { limits: { snapshotBytes: 100 } });
      await expect(registry.snapshot('quiz')).rejects.toThrow(
        /^quiz\/subskills: SKILL\.md and its subskills hold \d+ bytes of text; the limit is 100 bytes\./,
      );
    });
  });
});
