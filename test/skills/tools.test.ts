import {
  emptySkillTurnState,
  listSkillsResult,
  loadSkillResult,
  runSkillTool,
  type SkillToolContext,
  type SkillToolPorts,
  type ToolResult,
} from '../../core/skills';
import { registryFor, scratchCopy, turnContext } from './helpers';

describe('skill tools', () => {
  let scratch: ReturnType<typeof scratchCopy>;
  let turn: SkillToolContext;
  beforeEach(async () => {
    scratch = scratchCopy();
    turn = await turnContext(registryFor(scratch.skillsDir, scratch.dataDir));
  });
  afterEach(() => scratch.cleanup());

  const call = async (name: string, input: unknown): Promise<ToolResult> => {
    const outcome = await runSkillTool({ name, input }, turn);
    turn.state = outcome.state;
    return outcome.result;
  };

  it('load_skill returns the sanitized body, subskills and resources by name, and what the plan allows next', async () => {
    expect(await call('load_skill', { name: 'quiz' })).toEqual({
      isError: false,
      content: [
        'Skill quiz (version 0.1.0) is loaded. Follow its instructions.',
        '',
        '# Quiz',
        '',
        'Ask for the settings, then ask questions and grade each answer.',
        '',
        'Read `references/notes.md` before asking.',
        '',
        '---',
        'Subskills (load each with load_subskill when the instructions reach it): ask, grade, report',
        'Resources (read with read_file): assets/data.csv, references/notes.md',
        'Plan: checkpoint:settings ask grade+ report? checkpoint:wrap_up',
        'Allowed next: checkpoint settings (call request_human_approval with checkpoint "settings")',
        'Checkpoints the plan does not name (such as individual questions) may be requested at any time.',
        'Parameters: {"type":"object","properties":{"topic":{"type":"string","description":"What the quiz is about."},"rounds":{"type":"integer","description":"How many questions.","minimum":1,"default":3}},"required":["topic"],"additionalProperties":false}',
        'Output schema: {"type":"object","properties":{"score":{"type":"number","description":"The score."}},"required":["score"],"additionalProperties":false}',
      ].join('\n'),
    });
    expect(turn.state.loadOrder).toEqual(['quiz']);
  });

  it('load_skill of a skill without a plan says so', async () => {
    expect((await call('load_skill', { name: 'helper' })).content).toBe(
      [
        'Skill helper is loaded. Follow its instructions.',
        '',
        '# Helper',
        '',
        'Help the user.',
        '',
        '---',
        'Subskills: none',
        'Resources: none',
        'Plan: none declared; follow the instructions in order.',
      ].join('\n'),
    );
  });

  it('load_skill shows what the orchestrator says is allowed next, when it says', async () => {
    turn.allowedNext = () => [{ kind: 'step', name: 'report' }];
    expect((await call('load_skill', { name: 'quiz' })).content).toContain(
      'Allowed next: step report (call load_subskill with skill "quiz" and subskill "report")',
    );
    const snapshot = turn.state.loaded.quiz;
    expect(loadSkillResult(snapshot, []).content).toContain('Allowed next: the plan is complete.');
  });

  it('load_skill refuses unknown, disabled and malformed requests with an error result', async () => {
    expect(await call('load_skill', { name: 'quizz' })).toEqual({
      isError: true,
      content: 'No skill named "quizz". Did you mean "quiz"? Known skills: helper, quiz. Call list_skills to see them.',
    });
    expect(await call('load_skill', { name: 'disabled-skill' })).toEqual({
      isError: true,
      content: 'No skill named "disabled-skill". Known skills: helper, quiz. Call list_skills to see them.',
    });
    expect(await call('load_skill', {})).toEqual({
      isError: true,
      content: 'Field "name" must be a string: load_skill takes {"name"}.',
    });
    expect(await call('load_skill', { name: 'quiz', force: true })).toEqual({
      isError: true,
      content: 'Unknown field "force": load_skill takes {"name"}.',
    });
    expect(await call('load_skill', 'quiz')).toEqual({
      isError: true,
      content: 'Invalid input: load_skill takes {"name"}.',
    });
    expect(turn.state).toEqual(emptySkillTurnState());
  });

  it('load_subskill serves a sanitized subskill of a loaded skill only', async () => {
    expect(await call('load_subskill', { skill: 'quiz', subskill: 'grade' })).toEqual({
      isError: true,
      content: 'Skill "quiz" is not loaded in this turn. Call load_skill with name "quiz" first.',
    });
    await call('load_skill', { name: 'quiz' });
    expect(await call('load_subskill', { skill: 'quiz', subskill: 'grade' })).toEqual({
      isError: false,
      content:
        'Subskill grade of skill quiz. Follow these instructions for this step.\n\n# Grade\n\nGrade the answer: correct or not.',
    });
    expect(await call('load_subskill', { skill: 'quiz', subskill: 'subskills/grade.md' })).toEqual({
      isError: true,
      content:
        'Skill quiz has no subskill "subskills/grade.md". Did you mean "grade"? Its subskills: ask, grade, report.',
    });
    expect(await call('load_subskill', { skill: 'quiz' })).toEqual({
      isError: true,
      content: 'Field "subskill" must be a string: load_subskill takes {"skill", "subskill"}.',
    });
  });

  it('read_file needs a loaded skill and defaults to the most recently loaded one', async () => {
    expect(await call('read_file', { path: 'references/notes.md' })).toEqual({
      isError: true,
      content: 'No skill is loaded in this turn. Call load_skill first; read_file serves the files of loaded skills.',
    });
    await call('load_skill', { name: 'quiz' });
    await call('load_skill', { name: 'helper' });
    expect(await call('read_file', { path: 'references/notes.md' })).toEqual({
      isError: true,
      content: '"references/notes.md" is not a resource of skill helper. Its resources: none.',
    });
    expect(await call('read_file', { path: 'references/notes.md', skill: 'quiz' })).toEqual({
      isError: false,
      content: '# Notes\n\nQuiz notes version 1.\n',
    });
    expect(await call('read_file', { path: 'x.md', skill: 'disabled-skill' })).toEqual({
      isError: true,
      content: 'Skill "disabled-skill" is not loaded in this turn. Call load_skill with name "disabled-skill" first.',
    });
    await call('load_skill', { name: 'quiz' });
    expect(turn.state.loadOrder).toEqual(['helper', 'quiz']);
    expect((await call('read_file', { path: 'references/notes.md' })).isError).toBe(false);
  });

  it('list_skills returns name, description, category and parameters, optionally by category', async () => {
    const all = JSON.parse((await call('list_skills', {})).content);
    expect(all.count).toBe(2);
    expect(all.skills.map((s: { name: string }) => s.name)).toEqual(['helper', 'quiz']);
    expect(all.skills[1]).toEqual({
      name: 'quiz',
      description: 'A small quiz used by the tests. Confirms settings, asks questions, grades each answer and reports.',
      category: 'learning',
      parameters: {
        type: 'object',
        properties: {
          topic: { type: 'string', description: 'What the quiz is about.' },
          rounds: { type: 'integer', description: 'How many questions.', minimum: 1, default: 3 },
        },
        required: ['topic'],
        additionalProperties: false,
      },
    });
    const learning = JSON.parse((await call('list_skills', { category: 'learning' })).content);
    expect(learning).toEqual({ skills: [all.skills[1]], count: 1, category: 'learning' });
    expect(JSON.parse(listSkillsResult(undefined, []).content)).toEqual({ skills: [], count: 0, category: null });
    expect(await call('list_skills', { category: 7 })).toEqual({
      isError: true,
      content: 'Field "category" must be a string: list_skills takes {"category"?}.',
    });
  });

  it('never throws: a failing port becomes an error result with the innermost message', async () => {
    const failing: SkillToolPorts = {
      loadSkillSnapshot: async () => {
        // A typed skill error inside Temporal's wrapper: its message is for the model (issue 13.11).
        throw Object.assign(new Error('Activity task failed'), {
          cause: Object.assign(new Error('quiz/SKILL.md: body: the body is empty. Fix: write it.'), {
            type: 'SkillValidationError',
          }),
        });
      },
      readSkillResource: async () => {
        throw new Error('disk on fire');
      },
    };
    turn.ports = failing;
    expect(await call('load_skill', { name: 'quiz' })).toEqual({
      isError: true,
      content: 'load_skill failed: quiz/SKILL.md: body: the body is empty. Fix: write it.',
    });
    expect(turn.state.loadOrder).toEqual([]);
    expect(await call('frobnicate', {})).toEqual({ isError: true, content: 'frobnicate is not a skill tool.' });
  });
});
