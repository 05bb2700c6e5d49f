import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { runCli } from '../../cli/skillflow';
import { bundledSkills, invalidFixtures, validFixtures } from './helpers';

const root = path.resolve(__dirname, '..', '..');

async function run(argv: string[], env: Record<string, string | undefined> = {}, cwd = root) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), env, cwd });
  return { code, stdout, stderr };
}

describe('skillflow CLI', () => {
  it('prints help', async () => {
    const result = await run(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('skills validate [dir]');
    expect(result.stdout).toContain('skills list [dir]');
  });

  it('rejects unknown commands with usage and exit code 2', async () => {
    const result = await run(['skills', 'frobnicate']);
    expect(result.code).toBe(2);
    expect(
      result.stderr.startsWith('skillflow: unknown command "skills frobnicate"\n\nUsage: skillflow <command>'),
    ).toBe(true);
    expect((await run([])).code).toBe(2);
  });

  it('validates the bundled library (the default dir) with exit code 0', async () => {
    const result = await run(['skills', 'validate']);
    expect(result).toEqual({
      code: 0,
      stdout: 'Validating skills\n7 skills: 7 valid, 0 with errors; 0 errors, 0 warnings.\n',
      stderr: '',
    });
  });

  it('prints each problem with file, field and fix, and exits 1 on errors', async () => {
    const result = await run(['skills', 'validate', path.relative(root, invalidFixtures)]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      'error: test/fixtures/skills/invalid/sidecar-step-limit-unknown-step/skillflow.yaml: steps.aks: "aks" is not a subskill of this skill\n  fix: did you mean "ask"?\n',
    );
    expect(result.stdout.trimEnd().split('\n').pop()).toBe(
      '36 skills: 0 valid, 36 with errors; 37 errors, 0 warnings.',
    );
  });

  it('reads SKILLFLOW_SKILLS_DIR when no dir is given', async () => {
    const result = await run(['skills', 'validate'], { SKILLFLOW_SKILLS_DIR: validFixtures });
    expect(result.stdout).toBe(
      'Validating test/fixtures/skills/valid\n3 skills: 3 valid, 0 with errors; 0 errors, 0 warnings.\n',
    );
  });

  it('lists skills as a table', async () => {
    const result = await run(['skills', 'list', path.relative(root, validFixtures)]);
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')).toEqual([
      'NAME                       CATEGORY  DESCRIPTION                                                   PLAN',
      'disabled-skill (disabled)  -         A skill switched off with the enabled flag.                   -',
      'helper                     -         A helper skill with no sidecar, used by the tests.            -',
      'quiz                       learning  A small quiz used by the tests. Confirms settings, asks q...  checkpoint:settings ask grade+ report? checkpoint:wrap_up',
      '',
    ]);
  });

  it('lists the valid skills of a broken folder and exits 1', async () => {
    const result = await run(['skills', 'list', invalidFixtures]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('NAME  CATEGORY  DESCRIPTION  PLAN\n');
    expect(result.stderr).toMatch(
      /^Skipped with errors: bad-yaml, compatibility-too-long, .*\. Run "skillflow skills validate" for details\.\n$/,
    );
  });

  it('runs through bin/skillflow.js with the exit code of the command', async () => {
    const bin = path.join(root, 'bin', 'skillflow.js');
    const ok = await promisify(execFile)(process.execPath, [bin, 'skills', 'validate', bundledSkills], { cwd: root });
    expect(ok.stdout).toBe('Validating skills\n7 skills: 7 valid, 0 with errors; 0 errors, 0 warnings.\n');
    const failed = await promisify(execFile)(process.execPath, [bin, 'skills', 'validate', invalidFixtures], {
      cwd: root,
    }).catch((e: { code: number }) => e);
    expect((failed as { code: number }).code).toBe(1);
  });

  it('validate --json: every skill, every problem with file, field and fix, and the counts', async () => {
    const result = await run(['skills', 'validate', path.relative(root, invalidFixtures), '--json']);
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ skillsDir: invalidFixtures, valid: false, errors: 37, warnings: 0 });
    expect(report.skills).toHaveLength(36);
    expect(report.problems).toContainEqual({
      severity: 'error',
      skill: 'sidecar-step-limit-unknown-step',
      file: 'sidecar-step-limit-unknown-step/skillflow.yaml',
      field: 'steps.aks',
      message: '"aks" is not a subskill of this skill',
      fix: 'did you mean "ask"?',
    });
    const ok = JSON.parse((await run(['skills', 'validate', '--json'])).stdout);
    expect(ok).toMatchObject({ valid: true, errors: 0, warnings: 0 });
    const listed = JSON.parse((await run(['skills', 'list', '--json'])).stdout);
    expect(listed.skills.map((s: { name: string }) => s.name)).toContain('exam-mode-tuner');
  });

  it('prints the hint docs/skills.md shows for a plan typo, as the only problem (a warning: the spec accepts the skill)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-typo-'));
    fs.cpSync(bundledSkills, path.join(dir, 'skills'), { recursive: true });
    const skillFile = path.join(dir, 'skills', 'exam-mode-tuner', 'SKILL.md');
    fs.writeFileSync(
      skillFile,
      fs.readFileSync(skillFile, 'utf8').replace('question-generation adaptive', 'question-gen adaptive'),
    );
    const docs = fs.readFileSync(path.join(root, 'docs', 'skills.md'), 'utf8');
    const shown = /\n(warning: skills\/exam-mode-tuner\/SKILL\.md: metadata\.plan: [^\n]+\n  fix: [^\n]+\n)/.exec(
      docs,
    )?.[1];
    expect(shown).toBeDefined();
    const result = await run(['skills', 'validate'], {}, dir);
    expect(result).toEqual({
      code: 0,
      stdout: `Validating skills\n${shown}7 skills: 7 valid, 0 with errors; 0 errors, 1 warning.\n`,
      stderr: '',
    });
    // An author's CI wants the plan enforced: --strict fails on the warning, in text and JSON alike.
    expect(await run(['skills', 'validate', '--strict'], {}, dir)).toMatchObject({ code: 1, stdout: result.stdout });
    const strictJson = await run(['skills', 'validate', '--strict', '--json'], {}, dir);
    expect(strictJson.code).toBe(1);
    expect(JSON.parse(strictJson.stdout)).toMatchObject({ valid: false, errors: 0, warnings: 1 });
    expect((await run(['skills', 'validate', '--strict'])).code).toBe(0);
  });

  it('skills new scaffolds a skill that validates, and refuses bad names and existing folders', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-new-'));
    const created = await run(['skills', 'new', 'release-notes', dir]);
    expect(created.code).toBe(0);
    expect(created.stdout).toContain('Created ');
    expect(fs.readdirSync(path.join(dir, 'release-notes')).sort()).toEqual(['SKILL.md', 'skillflow.yaml', 'subskills']);
    const validated = await run(['skills', 'validate', dir, '--json']);
    expect(JSON.parse(validated.stdout)).toMatchObject({
      valid: true,
      errors: 0,
      warnings: 0,
      skills: [{ folder: 'release-notes', valid: true }],
    });
    const manifest = JSON.parse((await run(['skills', 'list', dir, '--json'])).stdout).skills[0];
    expect(manifest).toMatchObject({ name: 'release-notes', plan: 'checkpoint:confirm_scope do-the-work' });
    expect(await run(['skills', 'new', 'release-notes', dir])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('already exists'),
    });
    expect(await run(['skills', 'new', 'Release Notes', dir])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('try "release-notes"'),
    });
  });
});
