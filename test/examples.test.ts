import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../lib/config';
import { SkillRegistry } from '../lib/skills';
import { buildToolRegistry, type BuiltRegistry } from '../lib/tools/build';
import { buildClientPackage } from '../scripts/client-package';
import { aliceKey, buildTestApp } from './support/api';
import { testDeps } from './support/deps';
import { examRounds } from './support/exam-script';
import { startFakeAnthropic, text, toolUse, type FakeAnthropic } from './support/fake-anthropic';
import { ApiDriver } from './support/scenario';
import { TemporalTestEnv } from './support/temporal';

const examples = path.resolve(__dirname, '..', 'examples');

/**
 * Each example of examples/ runs as its README says: its settings (skills, tools folder, MCP config file) read by the
 * configuration the worker reads, its tools built by the worker's own builder, a turn started through the API with its
 * skill, and the model (the scripted fake) using what the example brings.
 */
describe('the examples', () => {
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  const opened: Array<{ app: FastifyInstance; tools: BuiltRegistry }> = [];

  beforeAll(async () => {
    env = await TemporalTestEnv.connect();
    fake = await startFakeAnthropic();
  });
  afterAll(async () => {
    for (const { app, tools } of opened) {
      await app.close();
      await tools.close();
    }
    await env?.close();
    await fake?.close();
  });

  /** The worker and the API as the example's README runs them (its variables, relative to the repository root). */
  async function run(settings: Record<string, string>): Promise<ApiDriver> {
    return new ApiDriver(await serve(settings));
  }

  async function serve(settings: Record<string, string>): Promise<FastifyInstance> {
    const config = loadConfig(settings);
    const tools = await buildToolRegistry(config, () => undefined);
    const taskQueue = env.newTaskQueue('example');
    await env.startWorker(taskQueue, testDeps(fake.url, { skillsDir: config.skillsDir, registry: tools.registry }));
    const skills = new SkillRegistry({
      skillsDir: config.skillsDir,
      storeDir: fs.mkdtempSync(path.join(os.tmpdir(), 'sf-example-')),
    });
    const { app } = await buildTestApp(env.client, taskQueue, settings, { skills });
    opened.push({ app, tools });
    return app;
  }

  /** The tool results the model was sent, in the order of the calls. */
  const toolResults = (): string[] =>
    fake.requests.flatMap((request) =>
      (request.body.messages as Array<{ content: unknown }>).flatMap((message) =>
        Array.isArray(message.content)
          ? message.content.filter((block) => block.type === 'tool_result').map((block) => String(block.content))
          : [],
      ),
    );

  beforeEach(() => fake.requests.splice(0));

  it('host-tool: the tools folder gives reading_time, which the reading-coach skill calls', async () => {
    const api = await run({
      SKILLFLOW_SKILLS_DIR: path.join(examples, 'host-tool', 'skills'),
      SKILLFLOW_TOOLS_DIR: path.join(examples, 'host-tool', 'tools'),
    });
    fake.enqueue(
      { content: [toolUse('reading_time', { text: 'word '.repeat(476) })] },
      { content: [text('About 2 minutes.')] },
    );
    const turnId = await api.startTurn('How long does this take me?', { skill: 'reading-coach' });
    expect(await api.waitFor(turnId, (turn) => turn.status === 'completed')).toMatchObject({
      output: 'About 2 minutes.',
    });
    expect(fake.requests[0].body.tools!.map((tool) => (tool as { name: string }).name)).toContain('reading_time');
    expect(toolResults()).toEqual(['476 words: about 2 min (adult reader, 238 words a minute)']);
  });

  it('mcp-server: the Claude-shaped mcp.json starts the glossary server, whose define tool glossary-tutor calls', async () => {
    const api = await run({
      SKILLFLOW_SKILLS_DIR: path.join(examples, 'mcp-server', 'skills'),
      SKILLFLOW_MCP_CONFIG: path.join(examples, 'mcp-server', 'mcp.json'),
    });
    fake.enqueue(
      { content: [toolUse('glossary__define', { term: 'Osmosis' })] },
      { content: [text('Osmosis is water moving...')] },
    );
    const turnId = await api.startTurn('What is osmosis?', { skill: 'glossary-tutor' });
    expect(await api.waitFor(turnId, (turn) => turn.status === 'completed')).toMatchObject({
      output: 'Osmosis is water moving...',
    });
    expect(toolResults()).toEqual([expect.stringContaining('Osmosis: Water moving through a membrane')]);
  });

  it('child-skills: lesson-planner invokes quiz-writer with typed params, and gets its validated output', async () => {
    const api = await run({ SKILLFLOW_SKILLS_DIR: path.join(examples, 'child-skills', 'skills') });
    const quiz = {
      questions: [{ question: 'What do plants make?', options: ['Sugar', 'Salt', 'Iron', 'Sand'], answer: 0 }],
    };
    fake.enqueue(
      {
        content: [
          toolUse('invoke_skill', {
            skill: 'quiz-writer',
            task: 'a closing quiz for this lesson',
            params: { topic: 'photosynthesis', count: 1 },
          }),
        ],
      },
      { content: [text(JSON.stringify(quiz))] },
      { content: [text('Lesson plan with its quiz.')] },
    );
    const turnId = await api.startTurn('Plan a lesson', {
      skill: 'lesson-planner',
      params: { topic: 'photosynthesis' },
    });
    const turn = await api.waitFor(turnId, (t) => t.status === 'completed');
    expect(turn.skills).toEqual([
      expect.objectContaining({
        skill: 'quiz-writer',
        status: 'completed',
        params: { topic: 'photosynthesis', level: 'beginner', count: 1 },
      }),
    ]);
    const results = toolResults();
    expect(results).toHaveLength(1);
    expect(JSON.parse(results[0])).toMatchObject({ skill_id: 'quiz-writer', success: true, output: quiz });
  });

  it('client-exam: exam.mjs takes an exam through the client package, its checkpoints answered from stdin', async () => {
    await buildClientPackage();
    const app = await serve({ SKILLFLOW_SKILLS_DIR: path.resolve(examples, '..', 'skills') });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    // The turn starts with the exam skill loaded, so the model's rounds begin after load_skill.
    fake.enqueue(
      ...examRounds(2)
        .slice(1)
        .map((content) => ({ content })),
    );
    // The example as an app that installed the package: its own folder, the package in its node_modules.
    const appDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-client-exam-'));
    fs.mkdirSync(path.join(appDir, 'node_modules', '@skillflow'), { recursive: true });
    fs.symlinkSync(
      path.resolve(examples, '..', 'packages', 'client'),
      path.join(appDir, 'node_modules', '@skillflow', 'client'),
    );
    fs.copyFileSync(path.join(examples, 'client-exam', 'exam.mjs'), path.join(appDir, 'exam.mjs'));
    const { stdout } = await new Promise<{ stdout: string }>((resolve, reject) => {
      const child = execFile(
        process.execPath,
        ['exam.mjs', 'data structures'],
        { cwd: appDir, env: { ...process.env, SKILLFLOW_URL: url, SKILLFLOW_API_KEY: aliceKey }, encoding: 'utf8' },
        (err, out, errors) => (err ? reject(new Error(`${err.message}\n${out}\n${errors}`)) : resolve({ stdout: out })),
      );
      // Approve the settings, answer both questions, pick the first route.
      child.stdin!.end('y\nAn array.\nA stack.\n1\n');
    });
    expect(stdout).toContain('Question 1: name a data structure with property 1.');
    expect(stdout).toContain('The exam ended: completed.\nScore: 100%\n  1. arrays: correct\n  2. stacks: correct\n');
    const answers = fake.requests.flatMap((request) =>
      (request.body.messages as Array<{ content: unknown }>).flatMap((message) =>
        Array.isArray(message.content) ? message.content.map((block) => JSON.stringify(block)) : [],
      ),
    );
    expect(answers.some((block) => block.includes('An array.'))).toBe(true);
    fs.rmSync(appDir, { recursive: true, force: true });
  }, 120_000);
});
