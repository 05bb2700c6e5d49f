import fs from 'node:fs';
import path from 'node:path';
import {
  emptySkillTurnState,
  runSkillTool,
  SkillVersionUnavailableError,
  type SkillToolContext,
} from '../../core/skills';
import { registryFor, rewrite, scratchCopy, turnContext } from './helpers';

async function call(context: SkillToolContext, name: string, input: unknown) {
  const outcome = await runSkillTool({ name, input }, context);
  context.state = outcome.state;
  return outcome.result;
}

describe('pinning: a skill edited mid-turn does not change the turn', () => {
  let scratch: ReturnType<typeof scratchCopy>;
  beforeEach(() => {
    scratch = scratchCopy();
  });
  afterEach(() => scratch.cleanup());

  const quizFile = (rel: string) => path.join(scratch.skillsDir, 'quiz', rel);
  const editEverything = () => {
    rewrite(
      quizFile('SKILL.md'),
      fs.readFileSync(quizFile('SKILL.md'), 'utf8').replace('Ask for the settings', 'EDITED: skip the settings'),
    );
    rewrite(quizFile('subskills/ask.md'), '# Ask\n\nEDITED: ask everything at once.\n');
    rewrite(quizFile('references/notes.md'), '# Notes\n\nQuiz notes version 2.\n');
  };

  it('keeps serving the pinned body, subskills and resources for the rest of the turn', async () => {
    const registry = registryFor(scratch.skillsDir, scratch.dataDir);
    const turn = await turnContext(registry);
    const first = await call(turn, 'load_skill', { name: 'quiz' });
    expect(first.isError).toBe(false);
    const pinnedHash = turn.state.loaded.quiz.hash;
    expect(pinnedHash).toMatch(/^[0-9a-f]{64}$/);

    editEverything();

    expect(await call(turn, 'load_skill', { name: 'quiz' })).toEqual(first);
    expect((await call(turn, 'load_subskill', { skill: 'quiz', subskill: 'ask' })).content).toContain(
      'Ask one question at a time.',
    );
    expect(await call(turn, 'read_file', { path: 'references/notes.md' })).toEqual({
      isError: false,
      content: '# Notes\n\nQuiz notes version 1.\n',
    });
    expect(turn.state.loaded.quiz.hash).toBe(pinnedHash);

    const otherWorker = registryFor(scratch.skillsDir, scratch.dataDir);
    expect(
      (await otherWorker.readResource({ name: 'quiz', hash: pinnedHash, path: 'references/notes.md' })).content,
    ).toBe('# Notes\n\nQuiz notes version 1.\n');

    const nextTurn = await turnContext(registry);
    expect((await call(nextTurn, 'load_skill', { name: 'quiz' })).content).toContain('EDITED: skip the settings');
    expect(nextTurn.state.loaded.quiz.hash).not.toBe(pinnedHash);
    expect((await call(nextTurn, 'load_subskill', { skill: 'quiz', subskill: 'ask' })).content).toContain(
      'EDITED: ask everything at once.',
    );
    expect((await call(nextTurn, 'read_file', { path: 'references/notes.md' })).content).toBe(
      '# Notes\n\nQuiz notes version 2.\n',
    );

    expect((await call(turn, 'read_file', { path: 'references/notes.md' })).content).toBe(
      '# Notes\n\nQuiz notes version 1.\n',
    );
  });

  it('snapshots are plain JSON with sanitized text, so they replay from workflow history unchanged', async () => {
    const snapshot = await registryFor(scratch.skillsDir, scratch.dataDir).snapshot('quiz');
    expect(JSON.parse(JSON.stringify(snapshot))).toEqual(snapshot);
    expect(snapshot.body).toBe(
      '# Quiz\n\nAsk for the settings, then ask questions and grade each answer.\n\nRead `references/notes.md` before asking.',
    );
    expect(snapshot.subskills).toEqual([
      { name: 'ask', body: '# Ask\n\nAsk one question at a time.' },
      { name: 'grade', body: '# Grade\n\nGrade the answer: correct or not.' },
      { name: 'report', body: '# Report\n\nReport the score.' },
    ]);
    expect(fs.readdirSync(path.join(scratch.dataDir, 'skill-store'))).toEqual([snapshot.hash]);
    expect(
      fs.readFileSync(
        path.join(scratch.dataDir, 'skill-store', snapshot.hash, 'files', 'references', 'notes.md'),
        'utf8',
      ),
    ).toBe('# Notes\n\nQuiz notes version 1.\n');
  });

  it('hashes the same content to the same version, and any edit to a new one', async () => {
    const registry = registryFor(scratch.skillsDir, scratch.dataDir);
    const a = await registry.snapshot('quiz');
    const b = await registryFor(scratch.skillsDir, path.join(scratch.root, 'other-data')).snapshot('quiz');
    expect(b.hash).toBe(a.hash);
    rewrite(quizFile('assets/data.csv'), 'alpha,1\nbeta,3\n');
    expect((await registry.snapshot('quiz')).hash).not.toBe(a.hash);
  });

  it('without the store copy, serves a pinned version only while the folder still holds it', async () => {
    const pinned = await registryFor(scratch.skillsDir, scratch.dataDir).snapshot('quiz');
    const storeless = registryFor(scratch.skillsDir, path.join(scratch.root, 'fresh-data'));
    expect(
      (await storeless.readResource({ name: 'quiz', hash: pinned.hash, path: 'references/notes.md' })).content,
    ).toBe('# Notes\n\nQuiz notes version 1.\n');

    editEverything();
    const another = registryFor(scratch.skillsDir, path.join(scratch.root, 'fresh-data-2'));
    const error = await another
      .readResource({ name: 'quiz', hash: pinned.hash, path: 'references/notes.md' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SkillVersionUnavailableError);
    expect((error as Error).message).toBe(
      `The pinned version ${pinned.hash.slice(0, 12)} of skill "quiz" is no longer available. Fix: start a new turn to load the current version.`,
    );
  });

  it('does not let a turn state from one skill read another skill by hash', async () => {
    const registry = registryFor(scratch.skillsDir, scratch.dataDir);
    const quiz = await registry.snapshot('quiz');
    await expect(
      registry.readResource({ name: 'helper', hash: quiz.hash, path: 'references/notes.md' }),
    ).rejects.toBeInstanceOf(SkillVersionUnavailableError);
    expect(emptySkillTurnState()).toEqual({ loaded: {}, loadOrder: [] });
  });
});
