import fs from 'node:fs';
import path from 'node:path';
import { runSkillTool, SkillResourceError, type SkillToolContext, type ToolResult } from '../../core/skills';
import { nodeSkillFileReader } from '../../lib/skills';
import { registryFor, scratchCopy, turnContext } from './helpers';

const secret = 'TOP SECRET: outside the skill folder';

describe('read_file never serves a byte from outside the skill folder', () => {
  let scratch: ReturnType<typeof scratchCopy>;
  let turn: SkillToolContext;
  const results: ToolResult[] = [];
  const quiz = (rel: string) => path.join(scratch.skillsDir, 'quiz', rel);

  const read = async (input: unknown): Promise<ToolResult> => {
    const outcome = await runSkillTool({ name: 'read_file', input }, turn);
    results.push(outcome.result);
    return outcome.result;
  };

  beforeAll(async () => {
    scratch = scratchCopy();
    fs.writeFileSync(path.join(scratch.root, 'secret.txt'), secret);
    fs.writeFileSync(path.join(scratch.skillsDir, 'secret.txt'), secret);
    fs.symlinkSync(path.join(scratch.root, 'secret.txt'), quiz('references/escape.md'));
    fs.symlinkSync('../../secret.txt', quiz('assets/relative-escape.txt'));
    fs.symlinkSync('notes.md', quiz('references/alias.md'));
    const registry = registryFor(scratch.skillsDir, scratch.dataDir);
    turn = await turnContext(registry);
    const loaded = await runSkillTool({ name: 'load_skill', input: { name: 'quiz' } }, turn);
    expect(loaded.result.isError).toBe(false);
    turn.state = loaded.state;
  });
  afterAll(() => {
    for (const result of results) expect(result.content).not.toContain('TOP SECRET');
    scratch.cleanup();
  });

  it('serves a discovered resource, with or without a leading ./', async () => {
    expect(await read({ path: 'references/notes.md' })).toEqual({
      isError: false,
      content: '# Notes\n\nQuiz notes version 1.\n',
    });
    expect(await read({ path: './assets/data.csv', skill: 'quiz' })).toEqual({
      isError: false,
      content: 'alpha,1\nbeta,2\n',
    });
  });

  it('serves a symlink that stays inside the folder', async () => {
    expect(await read({ path: 'references/alias.md' })).toEqual({
      isError: false,
      content: '# Notes\n\nQuiz notes version 1.\n',
    });
  });

  const refused: [string, string][] = [
    ['/etc/passwd', 'absolute paths are not allowed; give the path relative to the skill folder'],
    ['~/.ssh/id_rsa', 'absolute paths are not allowed; give the path relative to the skill folder'],
    ['C:/Windows/win.ini', 'absolute paths are not allowed; give the path relative to the skill folder'],
    ['file:///etc/passwd', 'absolute paths are not allowed; give the path relative to the skill folder'],
    ['../secret.txt', '".." is not allowed; only files inside the skill folder can be read'],
    ['references/../../secret.txt', '".." is not allowed; only files inside the skill folder can be read'],
    ['references/..', '".." is not allowed; only files inside the skill folder can be read'],
    ['%2e%2e/secret.txt', 'percent-encoded paths are not accepted; give the path exactly as listed'],
    ['..%2fsecret.txt', 'percent-encoded paths are not accepted; give the path exactly as listed'],
    ['%252e%252e%252fsecret.txt', 'percent-encoded paths are not accepted; give the path exactly as listed'],
    ['references%2f..%2f..%2fsecret.txt', 'percent-encoded paths are not accepted; give the path exactly as listed'],
    ['..\\secret.txt', 'backslashes are not allowed; separate folders with /'],
    ['references//notes.md', 'the path has an empty or "." segment'],
    ['references/./notes.md', 'the path has an empty or "." segment'],
    ['references/notes.md\u0000.png', 'the path contains control characters'],
    ['', 'the path is empty'],
  ];
  it.each(refused)('refuses %j', async (requested, reason) => {
    expect(await read({ path: requested })).toEqual({
      isError: true,
      content: `Refused path ${JSON.stringify(requested)}: ${reason}.`,
    });
  });

  it('refuses symlinks that leave the folder: they are never discovered', async () => {
    for (const requested of ['references/escape.md', 'assets/relative-escape.txt']) {
      expect(await read({ path: requested })).toEqual({
        isError: true,
        content: `"${requested}" is not a resource of skill quiz. Its resources: assets/data.csv, references/alias.md, references/notes.md.`,
      });
    }
    const catalog = await registryFor(scratch.skillsDir, scratch.dataDir).catalog();
    expect(catalog.problems.map((p) => `${p.severity} ${p.file}: ${p.message}`)).toEqual([
      'warning quiz/assets/relative-escape.txt: the symlink leads outside the skill folder, so it is never served',
      'warning quiz/references/escape.md: the symlink leads outside the skill folder, so it is never served',
    ]);
  });

  it('refuses files that were not discovered at registry time', async () => {
    fs.writeFileSync(quiz('references/added-later.md'), 'added after the skill was loaded');
    expect(await read({ path: 'references/added-later.md' })).toEqual({
      isError: true,
      content:
        '"references/added-later.md" is not a resource of skill quiz. Its resources: assets/data.csv, references/alias.md, references/notes.md.',
    });
  });

  it('does not serve subskills, SKILL.md or skillflow.yaml as resources', async () => {
    expect(await read({ path: 'subskills/ask.md' })).toEqual({
      isError: true,
      content:
        'Refused path "subskills/ask.md": subskill files are not resources: load them with load_subskill when the skill says to.',
    });
    expect(await read({ path: 'SKILL.md' })).toEqual({
      isError: true,
      content: 'Refused path "SKILL.md": SKILL.md is the skill body itself: it comes through load_skill.',
    });
    expect(await read({ path: 'skillflow.yaml' })).toEqual({
      isError: true,
      content: 'Refused path "skillflow.yaml": skillflow.yaml is engine configuration, not a resource.',
    });
  });

  it('serves the pinned bytes even when a resource is swapped for an escaping symlink after loading', async () => {
    fs.rmSync(quiz('assets/data.csv'));
    fs.symlinkSync(path.join(scratch.root, 'secret.txt'), quiz('assets/data.csv'));
    expect(await read({ path: 'assets/data.csv' })).toEqual({ isError: false, content: 'alpha,1\nbeta,2\n' });
  });

  it('drops a resource swapped for an escaping symlink from the next version, and never reads through it', async () => {
    const registry = registryFor(scratch.skillsDir, path.join(scratch.root, 'other-data'));
    const snapshot = await registry.snapshot('quiz');
    expect(snapshot.manifest.resources).toEqual([
      'references/added-later.md',
      'references/alias.md',
      'references/notes.md',
    ]);
    await expect(
      nodeSkillFileReader.readFile(quiz('assets/data.csv'), path.join(scratch.skillsDir, 'quiz'), 1024),
    ).rejects.toThrow(/leads outside the skill folder$/);
  });

  it('refuses bad paths in the activity too, whatever the caller checked', async () => {
    const registry = registryFor(scratch.skillsDir, scratch.dataDir);
    const hash = turn.state.loaded.quiz.hash;
    for (const requested of [
      '../secret.txt',
      '/etc/passwd',
      '%2e%2e/secret.txt',
      'subskills/ask.md',
      'references/added-later.md',
    ]) {
      await expect(registry.readResource({ name: 'quiz', hash, path: requested })).rejects.toBeInstanceOf(
        SkillResourceError,
      );
    }
  });
});
