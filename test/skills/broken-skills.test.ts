import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { buildApp } from '../../api/app';
import { loadConfig } from '../../lib/config';
import { nodeSkillFileReader, validateSkillLibrary, type SkillFileReader } from '../../lib/skills';
import { registryFor, scratchCopy } from './helpers';

/** An error as Node raises it for a file it may not read, with the absolute path in its message. */
const permissionDenied = (file: string) =>
  Object.assign(new Error(`EACCES: permission denied, open '${file}'`), { code: 'EACCES', path: file });

/** Reads every file as usual, except the quiz skill's SKILL.md, which this process may not read. */
const quizUnreadable: SkillFileReader = {
  readFrontmatter: async (file, maxBytes) => {
    if (file.endsWith(`${path.sep}quiz${path.sep}SKILL.md`)) throw permissionDenied(file);
    return nodeSkillFileReader.readFrontmatter(file, maxBytes);
  },
  readFile: async (file, root, maxBytes) => {
    if (file.endsWith(`${path.sep}quiz${path.sep}SKILL.md`)) throw permissionDenied(file);
    return nodeSkillFileReader.readFile(file, root, maxBytes);
  },
};

/** One broken skill is reported and skipped, per folder; the catalog, the API and validation go on (issue 13.1). */
describe('a skill that cannot be read', () => {
  let scratch: ReturnType<typeof scratchCopy>;
  beforeEach(() => {
    scratch = scratchCopy();
  });
  afterEach(() => {
    jest.restoreAllMocks();
    scratch.cleanup();
  });

  const noAbsolutePaths = (problems: { message: string; fix: string }[]) => {
    for (const problem of problems) expect(`${problem.message} ${problem.fix}`).not.toContain(scratch.root);
  };

  it('an unreadable SKILL.md: the catalog lists the other skills and reports it, without an absolute path', async () => {
    const catalog = await registryFor(scratch.skillsDir, scratch.dataDir, { reader: quizUnreadable }).catalog();
    expect(catalog.skills.map((skill) => skill.name)).toEqual(['helper']);
    expect(catalog.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          severity: 'error',
          skill: 'quiz',
          file: 'quiz/SKILL.md',
          message: 'cannot be read (EACCES: permission denied)',
        }),
      ]),
    );
    noAbsolutePaths(catalog.problems);
  });

  it('a skill whose folder fails realpath, or whose file fails lstat (vanished mid-listing), is skipped alone', async () => {
    const quizRoot = path.join(scratch.skillsDir, 'quiz');
    const helperFile = path.join(scratch.skillsDir, 'helper', 'SKILL.md');
    const realpath = fs.promises.realpath;
    const lstat = fs.promises.lstat;
    jest.spyOn(fs.promises, 'realpath').mockImplementation(async (target, ...rest) => {
      if (String(target) === quizRoot)
        throw Object.assign(new Error(`ENOENT: no such file or directory, realpath '${quizRoot}'`), { code: 'ENOENT' });
      return realpath(target, ...(rest as []));
    });
    jest.spyOn(fs.promises, 'lstat').mockImplementation(async (target, ...rest) => {
      if (String(target) === helperFile)
        throw Object.assign(new Error(`ENOENT: no such file or directory, lstat '${helperFile}'`), { code: 'ENOENT' });
      return lstat(target, ...(rest as []));
    });
    const catalog = await registryFor(scratch.skillsDir, scratch.dataDir).catalog();
    expect(catalog.disabled).toEqual(['disabled-skill']);
    expect(catalog.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          severity: 'error',
          file: 'quiz/',
          message: 'the skill folder cannot be read (ENOENT: no such file or directory)',
        }),
        expect.objectContaining({
          severity: 'error',
          file: 'helper/SKILL.md',
          message: 'cannot be read (ENOENT: no such file or directory)',
        }),
      ]),
    );
    noAbsolutePaths(catalog.problems);
  });

  it('GET /v1/skills answers 200 with the readable skills', async () => {
    fs.cpSync(path.join(scratch.skillsDir, 'helper'), path.join(scratch.skillsDir, 'plain'), { recursive: true });
    fs.writeFileSync(
      path.join(scratch.skillsDir, 'plain', 'SKILL.md'),
      '---\nname: plain\ndescription: A skill that stays readable.\n---\n\nDo the thing.\n',
    );
    fs.rmSync(path.join(scratch.skillsDir, 'plain', 'skillflow.yaml'), { force: true });
    const config = loadConfig({ SKILLFLOW_AUTH: 'off' });
    // The skill routes never reach Temporal: a client that is never connected is enough.
    const app = await buildApp({
      client: new Client(),
      config,
      apiKeys: [],
      skills: registryFor(scratch.skillsDir, scratch.dataDir, { reader: quizUnreadable }),
    });
    try {
      const response = await app.inject({ method: 'GET', url: '/v1/skills' });
      expect(response.statusCode).toBe(200);
      expect(response.json().skills.map((skill: { name: string }) => skill.name)).toContain('plain');
    } finally {
      await app.close();
    }
  });

  it('skills validate reports the same problem as the catalog (one scan path, issue 10.2.8)', async () => {
    const report = await validateSkillLibrary(scratch.skillsDir, { reader: quizUnreadable });
    const catalog = await registryFor(scratch.skillsDir, scratch.dataDir, { reader: quizUnreadable }).catalog();
    const quizProblems = (problems: { skill: string; message: string }[]) =>
      problems.filter((p) => p.skill === 'quiz').map((p) => p.message);
    expect(quizProblems(report.problems)).toEqual(['cannot be read (EACCES: permission denied)']);
    expect(quizProblems(report.problems)).toEqual(quizProblems(catalog.problems));
    expect(report.skills.find((skill) => skill.folder === 'quiz')?.manifest).toBeNull();
  });
});

describe('skills validate and the registry agree (issue 10.2.8)', () => {
  let scratch: ReturnType<typeof scratchCopy>;
  beforeEach(() => {
    scratch = scratchCopy();
  });
  afterEach(() => scratch.cleanup());

  it('a front matter that closes after 16 KiB is an error for both', async () => {
    const file = path.join(scratch.skillsDir, 'helper', 'SKILL.md');
    const text = fs.readFileSync(file, 'utf8');
    const padding = `# ${'x'.repeat(17 * 1024)}\n`;
    fs.writeFileSync(file, text.replace(/^---\n/, `---\n${padding}`));
    const expected = {
      severity: 'error',
      file: 'helper/SKILL.md',
      message: 'the front matter is not closed within 16 KiB',
    };
    const catalog = await registryFor(scratch.skillsDir, scratch.dataDir).catalog();
    expect(catalog.problems).toEqual(expect.arrayContaining([expect.objectContaining(expected)]));
    const report = await validateSkillLibrary(scratch.skillsDir);
    expect(report.problems).toEqual(expect.arrayContaining([expect.objectContaining(expected)]));
    expect(report.skills.find((skill) => skill.folder === 'helper')?.manifest).toBeNull();
  });
});
