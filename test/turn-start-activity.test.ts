import { createSkillActivities } from '../activities/skills';
import type { ToolActivities } from '../activities/tools';
import { createTurnStartActivities } from '../activities/turn-start';
import { SkillNotFoundError } from '../core/skills';
import type { ToolCatalog } from '../core/tools';
import { scratchCopy } from './skills/helpers';

/** readTurnStart reads what the separate start activities read, and returns a skill error of the given skill as data. */
describe('readTurnStart', () => {
  const scratch = scratchCopy();
  afterAll(() => scratch.cleanup());
  const skills = createSkillActivities({ skillsDir: scratch.skillsDir, dataDir: scratch.dataDir });
  const toolCatalog: ToolCatalog = { tools: [], rootGrants: ['calculator'] };
  let toolReads = 0;
  const tools = {
    toolCatalog: async () => {
      toolReads++;
      return toolCatalog;
    },
  } as unknown as ToolActivities;
  const read = (overrides: Partial<typeof skills> = {}) =>
    createTurnStartActivities({ ...skills, ...overrides }, tools).readTurnStart;

  it('the catalogs, and the given skill pinned as loadSkillSnapshot pins it', async () => {
    toolReads = 0;
    const start = await read()({ tools: true, carried: [], given: 'quiz' });
    expect(start.catalog).toEqual(await skills.skillCatalog());
    expect(start.tools).toEqual(toolCatalog);
    expect(start.carried).toEqual({ snapshots: [], unavailable: [] });
    expect(start.given).toEqual({ snapshot: await skills.loadSkillSnapshot({ name: 'quiz' }) });
    expect(toolReads).toBe(1);
  });

  it('no tool catalog without registered tools; no load of a skill the catalog does not list', async () => {
    toolReads = 0;
    const start = await read()({ tools: false, carried: [], given: 'no-such-skill' });
    expect(start.tools).toEqual({ tools: [], rootGrants: [] });
    expect(start.given).toBeUndefined();
    expect(toolReads).toBe(0);
  });

  it('the carried skills read back; a given skill among them is not loaded again', async () => {
    const pinned = await skills.loadSkillSnapshot({ name: 'quiz' });
    const gone = { name: 'helper', hash: '0'.repeat(64) };
    const start = await read()({ tools: false, carried: [{ name: 'quiz', hash: pinned.hash }, gone], given: 'quiz' });
    expect(start.carried).toEqual({ snapshots: [pinned], unavailable: [gone] });
    expect(start.given).toBeUndefined();
  });

  it('a skill error of the given skill is returned with its type and message', async () => {
    const missing = new SkillNotFoundError('Skill quiz vanished.', 'Put it back.');
    const start = await read({ loadSkillSnapshot: async () => Promise.reject(missing) })({
      tools: false,
      carried: [],
      given: 'quiz',
    });
    expect(start.given).toEqual({ failure: { type: 'SkillNotFoundError', message: missing.message } });
  });

  it('any other error of the given skill leaves it unread, so the turn loads it with loadSkillSnapshot as before', async () => {
    // The turn's start must not fail for it: with the separate activities, loadSkillSnapshot was retried, then its
    // failure was a load_skill error the model saw and the turn went on (workflows/skill-tools.ts preloadSkill).
    const broken = read({ loadSkillSnapshot: async () => Promise.reject(new Error('EIO: i/o error')) });
    const start = await broken({ tools: true, carried: [], given: 'quiz' });
    expect(start.given).toBeUndefined();
    expect(start.catalog).toEqual(await skills.skillCatalog());
    expect(start.tools).toEqual(toolCatalog);
  });
});
