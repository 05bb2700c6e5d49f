import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { runCli } from '../../cli/skillflow';
import { bundledSkills, invalidFixtures, validFixtures } from './helpers';

const root = path.resolve(__dirname, '..', '..');

async function run(argv: string[], env: Record<string, string | undefined> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), env, cwd: root });
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
    expect(result.stderr.startsWith('skillflow: unknown command "skills frobnicate"\n\nUsage: skillflow <command>')).toBe(true);
    expect((await run([])).code).toBe(2);
  });

  it('validates the bundled library (the default dir) with exit code 0', async () => {
    const result = await run(['skills', 'validate']);
    expect(result).toEqual({ code: 0, stdout: 'Validating skills\n6 skills: 6 valid, 0 with errors; 0 errors, 0 warnings.\n', stderr: '' });
  });

  it('prints each problem with file, field and fix, and exits 1 on errors', async () => {
    const result = await run(['skills', 'validate', path.relative(root, invalidFixtures)]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      'error: test/fixtures/skills/invalid/plan-missing-subskill/SKILL.md: metadata.plan: step "grde" has no subskill file subskills/grde.md\n  fix: did you mean "grade"? Otherwise create subskills/grde.md.\n',
    );
    expect(result.stdout.trimEnd().split('\n').pop()).toBe('42 skills: 0 valid, 42 with errors; 43 errors, 0 warnings.');
  });

  it('reads SKILLFLOW_SKILLS_DIR when no dir is given', async () => {
    const result = await run(['skills', 'validate'], { SKILLFLOW_SKILLS_DIR: validFixtures });
    expect(result.stdout).toBe('Validating test/fixtures/skills/valid\n3 skills: 3 valid, 0 with errors; 0 errors, 0 warnings.\n');
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
    expect(result.stderr).toMatch(/^Skipped with errors: bad-category, bad-enabled, .*\. Run "skillflow skills validate" for details\.\n$/);
  });

  it('runs through bin/skillflow.js with the exit code of the command', async () => {
    const bin = path.join(root, 'bin', 'skillflow.js');
    const ok = await promisify(execFile)(process.execPath, [bin, 'skills', 'validate', bundledSkills], { cwd: root });
    expect(ok.stdout).toBe('Validating skills\n6 skills: 6 valid, 0 with errors; 0 errors, 0 warnings.\n');
    const failed = await promisify(execFile)(process.execPath, [bin, 'skills', 'validate', invalidFixtures], { cwd: root }).catch((e: { code: number }) => e);
    expect((failed as { code: number }).code).toBe(1);
  });
});
