import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { runCli } from '../cli/skillflow';
import { freePort } from '../lib/dev-server';
import { InProcessChannel } from '../lib/live';
import { SkillRegistry } from '../lib/skills';
import { aliceKey, bobKey, buildTestApp, operatorKey } from './support/api';
import { bundledSkillsDir, testDeps } from './support/deps';
import { startFakeAnthropic, text, toolUse, type FakeAnthropic } from './support/fake-anthropic';
import { examOutput } from './support/exam-script';
import { ApiDriver } from './support/scenario';
import { TemporalTestEnv } from './support/temporal';

const root = path.resolve(__dirname, '..');
const bin = path.join(root, 'bin', 'skillflow.js');
const exam = 'exam-mode-tuner';
const loadSkill = () => toolUse('load_skill', { name: exam });
const subskill = (name: string) => toolUse('load_subskill', { skill: exam, subskill: name });
const ask = (checkpoint: string, kind: 'approval' | 'question', extra: Record<string, unknown> = {}) =>
  toolUse('request_human_approval', { checkpoint, summary: `About ${checkpoint}`, kind, ...extra });

/** The `skillflow` commands against a running stack: the suite's Temporal server, a worker, the API on a real port. */
describe('skillflow chat, inbox, answer and runs show against a running API', () => {
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let app: FastifyInstance;
  let api: ApiDriver;
  let url: string;
  const live = new InProcessChannel();

  beforeAll(async () => {
    env = await TemporalTestEnv.connect();
    fake = await startFakeAnthropic();
    const taskQueue = env.newTaskQueue('cli');
    await env.startWorker(taskQueue, testDeps(fake.url), (turnId, event) => live.publish(turnId, event));
    const skills = new SkillRegistry({
      skillsDir: bundledSkillsDir,
      storeDir: fs.mkdtempSync(path.join(os.tmpdir(), 'sf-store-')),
    });
    ({ app } = await buildTestApp(env.client, taskQueue, {}, { live, skills }));
    url = await app.listen({ port: 0, host: '127.0.0.1' });
    api = new ApiDriver(app);
  });
  afterAll(async () => {
    await app?.close();
    await env?.close();
    await fake?.close();
    await live.close();
  });
  beforeEach(() => {
    fake.requests.length = 0;
  });
  afterEach(() => {
    fake.respond(undefined);
    expect(fake.pending).toBe(0);
  });

  /** The CLI in this process, with piped input. */
  async function cli(argv: string[], key = operatorKey, input = '', baseUrl = url) {
    let stdout = '';
    let stderr = '';
    const stdin = new PassThrough();
    stdin.end(input);
    const code = await runCli(argv, {
      stdout: (t) => (stdout += t),
      stderr: (t) => (stderr += t),
      env: { SKILLFLOW_URL: baseUrl, SKILLFLOW_API_KEY: key },
      cwd: root,
      stdin,
    });
    return { code, stdout, stderr };
  }

  /** bin/skillflow.js as a process; `input` is written to its stdin; `onOutput` sees stdout as it grows. */
  function spawnCli(
    argv: string[],
    options: {
      key?: string;
      input?: string;
      onOutput?: (stdout: string, child: ReturnType<typeof spawn>) => void;
    } = {},
  ) {
    const child = spawn(process.execPath, [bin, ...argv], {
      cwd: root,
      env: { ...process.env, SKILLFLOW_URL: url, SKILLFLOW_API_KEY: options.key ?? aliceKey },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      options.onOutput?.(stdout, child);
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    if (options.input !== undefined) child.stdin.end(options.input);
    return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
      child.on('close', (code) => resolve({ code, stdout, stderr })),
    );
  }

  it('chat runs a whole short exam from piped input: streamed text, tools, steps, each checkpoint as a prompt', async () => {
    fake.enqueue(
      { content: [text('Loading the exam skill.'), loadSkill()] },
      {
        content: [
          ask('exam_params', 'approval', { params: { question_count: 2, time_limit_min: 35, concepts: ['arrays'] } }),
        ],
      },
      { content: [subskill('question-generation')] },
      { content: [text('Question 1: what is an array?'), ask('question_1', 'question')] },
      { content: [subskill('adaptive-difficulty')] },
      {
        content: [
          text('Question 2: pick the structure with O(1) push.'),
          ask('question_2', 'question', { options: ['stack', 'sorted array'] }),
        ],
      },
      { content: [subskill('adaptive-difficulty')] },
      { content: [subskill('performance-analytics')] },
      { content: [toolUse('submit_output', { output: examOutput(2) })] },
      { content: [text('You scored 100%.'), ask('post_exam_routing', 'approval', { options: ['x'] })] },
      { content: [text('Great work. Come back any time.')] },
    );
    const input = [
      'Give me a practice test on data structures.',
      'm',
      'question_count=3',
      '',
      'A contiguous block of elements.',
      '1',
      '4',
      '',
    ].join('\n');
    const result = await spawnCli(['chat'], { input });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const out = result.stdout;
    const sessionId = /^Session ([a-z0-9]+)\./.exec(out)?.[1];
    expect(sessionId).toBeDefined();
    for (const expected of [
      'you> Give me a practice test on data structures.\n',
      'assistant> Loading the exam skill.\n',
      '  - load_skill {"name":"exam-mode-tuner"}\n',
      '? About exam_params\n',
      '    question_count = 2\n',
      'approve? ([y]es, [m]odify, [c]ancel)> m\n',
      '  key=value (empty line when done)> question_count=3\n',
      '  ok cp-1: modify by alice\n',
      '  > exam-mode-tuner: question-generation (then adaptive-difficulty, performance-analytics, checkpoint:post_exam_routing)\n',
      'assistant> Question 1: what is an array?\n',
      'answer (text, /cancel)> A contiguous block of elements.\n',
      '    1) stack\n',
      'answer (text, a number to choose, /cancel)> 1\n',
      '  ok cp-3: choose by alice\n',
      '    4) Stop here\n',
      // The exam's routing checkpoint takes only a route or cancel: the prompt offers no approve.
      'choose (a number, [c]ancel)> 4\n',
      'assistant> Great work. Come back any time.\n',
    ]) {
      expect(out).toContain(expected);
    }
    const session = (
      await app.inject({
        method: 'GET',
        url: `/v1/sessions/${sessionId}`,
        headers: { authorization: `Bearer ${aliceKey}` },
      })
    ).json();
    expect(session.turns).toEqual([
      expect.objectContaining({ status: 'completed', output: 'Great work. Come back any time.' }),
    ]);
    const results = fake.requests.map((request) => JSON.stringify(request.body.messages.at(-1)));
    expect(results.some((r) => r.includes('question_count') && r.includes('3'))).toBe(true);
    expect(results.some((r) => r.includes('A contiguous block of elements.'))).toBe(true);
  }, 90_000);

  it('chat --session rejoins a turn waiting at a checkpoint; Ctrl-C leaves it running and says how to rejoin', async () => {
    fake.enqueue(
      {
        content: [
          toolUse('request_human_approval', { checkpoint: 'go_ahead', summary: 'Go ahead?', kind: 'approval' }),
        ],
      },
      { content: [text('Went ahead.')] },
    );
    const sessionId = await api.createSession();
    const turnId = (await api.sendMessage(sessionId, { message: 'start something' })).body.id;
    await api.pending(turnId);

    let interrupted = false;
    const left = await spawnCli(['chat', '--session', sessionId], {
      onOutput: (stdout, child) => {
        if (!interrupted && stdout.includes('approve? ')) {
          interrupted = true;
          child.kill('SIGINT');
        }
      },
    });
    expect(left.code).toBe(130);
    expect(left.stdout).toContain(`Rejoined session ${sessionId} (1 turn).`);
    expect(left.stderr).toContain(`Rejoin with: skillflow chat --session ${sessionId}`);
    expect((await api.turn(turnId)).body.status).toBe('waiting');

    const rejoined = await cli(['chat', '--session', sessionId], aliceKey, 'y\n');
    expect(rejoined.code).toBe(0);
    expect(rejoined.stdout).toContain('? Go ahead?');
    expect(rejoined.stdout).toContain('assistant> Went ahead.');
    expect((await api.turn(turnId)).body).toMatchObject({ status: 'completed', output: 'Went ahead.' });
  }, 60_000);

  /**
   * bin/skillflow.js at a terminal: util-linux `script` runs it on a pseudo-terminal (its stdin, stdout and stderr are
   * TTYs; `script` passes what is written to its own stdin on, and gets an end of input only when that ends, which
   * this never does before the process exits). Each step waits for its `after` in the output since the previous step
   * (30 s at most: a start on a busy machine, a turn), then types its `type`; after the last step the process has
   * 10 s to exit, or it is ended and `exited` is false. `reached` counts the steps reached.
   */
  function atTerminal(argv: string[], baseUrl: string, steps: Array<{ after: string; type?: string }>) {
    const quoted = [process.execPath, bin, ...argv].map((arg) => `'${arg.replace(/'/g, "'\\''")}'`).join(' ');
    const child = spawn('script', ['-qec', quoted, '/dev/null'], {
      cwd: root,
      env: { ...process.env, SKILLFLOW_URL: baseUrl, SKILLFLOW_API_KEY: aliceKey },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    let output = '';
    let since = 0;
    let reached = 0;
    let exited = true;
    let timer: NodeJS.Timeout | undefined;
    const giveUpAfter = (ms: number) => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        exited = false;
        child.kill('SIGTERM');
      }, ms);
    };
    giveUpAfter(30_000);
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      while (reached < steps.length && output.slice(since).includes(steps[reached].after)) {
        since = output.length;
        const { type } = steps[reached++];
        if (type !== undefined) child.stdin.write(type);
        giveUpAfter(reached === steps.length ? 10_000 : 30_000);
      }
    });
    return new Promise<{ exited: boolean; reached: number; code: number | null; output: string }>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        child.stdin.destroy();
        resolve({ exited, reached, code, output });
      });
    });
  }

  it('chat at a terminal gives the terminal back after /quit', async () => {
    fake.enqueue({ content: [text('Hello there.')] });
    const quit = await atTerminal(['chat'], url, [
      { after: 'you> ', type: 'hello\n' },
      { after: 'you> ', type: '/quit\n' },
    ]);
    expect(quit).toMatchObject({ reached: 2, exited: true, code: 0 });
    expect(quit.output).toContain('assistant> Hello there.');
  });

  it('chat at a terminal gives the terminal back after an API that is not running', async () => {
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const down = await atTerminal(['chat'], nobody, [{ after: 'Is it running?' }]);
    expect(down).toMatchObject({ reached: 1, exited: true, code: 1 });
    expect(down.output).toContain(`The skillflow API at ${nobody} does not answer (ECONNREFUSED).`);
  });

  it('chat explains what a user can fix: API down, a bad key, an unknown session', async () => {
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const down = await cli(['chat'], aliceKey, '', nobody);
    expect(down.code).toBe(1);
    expect(down.stderr).toBe(
      `skillflow: The skillflow API at ${nobody} does not answer (ECONNREFUSED).\nIs it running? Start it with \`npm start\`, or point SKILLFLOW_URL at it.\n`,
    );
    const badKey = await cli(['chat'], 'not-a-key-0123456789abcdef');
    expect(badKey.code).toBe(1);
    expect(badKey.stderr).toMatch(
      /^skillflow: The API refused the key \(That API key is not valid\.\)\. Set SKILLFLOW_API_KEY/,
    );
    const unknown = await cli(['chat', '--session', '0123456789abcdef0123'], aliceKey);
    expect(unknown).toMatchObject({
      code: 1,
      stderr:
        'skillflow: session 0123456789abcdef0123 was not found (it may have been deleted, or belong to another user).\n',
    });
  });

  it('inbox lists waiting turns for operators; answer resolves one; runs show prints its timeline', async () => {
    fake.enqueue(
      {
        content: [
          text('Planning.'),
          toolUse('request_human_approval', {
            checkpoint: 'deploy',
            summary: 'Deploy 2 replicas?',
            kind: 'approval',
            params: { replicas: 2 },
          }),
        ],
      },
      { content: [text('Deployed 3.')] },
    );
    const turnId = await api.startTurn('deploy it');
    await api.pending(turnId);

    const listed = await cli(['inbox', '--json']);
    expect(listed.code).toBe(0);
    const row = JSON.parse(listed.stdout).turns.find((t: { turnId: string }) => t.turnId === turnId);
    expect(row).toMatchObject({
      userId: 'alice',
      checkpoint: { id: 'cp-1', name: 'deploy', kind: 'approval', params: { replicas: 2 } },
    });
    const table = await cli(['inbox']);
    expect(table.stdout).toMatch(/^TURN +USER +SKILL +CHECKPOINT +WAITING +DEADLINE +SUMMARY\n/);
    expect(table.stdout).toMatch(new RegExp(`${turnId} +alice +- +cp-1 deploy +\\d+s +none +Deploy 2 replicas\\?`));
    expect(
      JSON.parse((await cli(['inbox', '--json'], bobKey)).stdout).turns.some(
        (t: { turnId: string }) => t.turnId === turnId,
      ),
    ).toBe(false);

    expect(await cli(['answer', turnId, 'cp-1', '--choose', 'x'])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('(400 invalid_decision, request '),
    });
    const answered = await cli(['answer', turnId, 'deploy', '--modify', 'replicas=3', '--json']);
    expect(answered).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(answered.stdout)).toEqual({ checkpointId: 'cp-1', action: 'modify', by: 'ops' });
    await api.finished(turnId);

    const shown = await cli(['runs', 'show', turnId]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`Turn ${turnId} (session `);
    expect(shown.stdout).toContain('  status   completed\n');
    for (const line of [
      'assistant  Planning.',
      'checkpoint cp-1 deploy (approval): Deploy 2 replicas?',
      'answered   cp-1: modify by ops',
      'done       Deployed 3.',
    ]) {
      expect(shown.stdout).toMatch(new RegExp(`\\n +\\+\\d+\\.\\ds  ${line.replace(/[.?()+]/g, '\\$&')}\\n`));
    }
    const json = JSON.parse((await cli(['runs', 'show', turnId, '--json'])).stdout);
    expect(json.turn).toMatchObject({ id: turnId, status: 'completed' });
    expect(json.events.map((e: { type: string }) => e.type)).toEqual([
      'status',
      'message',
      'tool.start',
      'checkpoint.requested',
      'status',
      'checkpoint.resolved',
      'status',
      'tool.end',
      'message',
      'status',
      'done',
    ]);
  });

  it('chat --json prints every event as a JSON line on stdout, prompts on stderr; answer takes several --modify pairs', async () => {
    fake.enqueue(
      {
        content: [
          toolUse('request_human_approval', {
            checkpoint: 'size',
            summary: 'Size?',
            kind: 'approval',
            params: { width: 1, label: 'a' },
          }),
        ],
      },
      { content: [text('Sized.')] },
    );
    const result = await cli(['chat', '--json'], aliceKey, 'make it\nm\nwidth=2 label=wide\n\n');
    expect(result.code).toBe(0);
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; action?: string; output?: string });
    expect(events.filter((event) => event.type !== 'message.delta').map((event) => event.type)).toEqual([
      'status',
      'tool.start',
      'checkpoint.requested',
      'status',
      'checkpoint.resolved',
      'status',
      'tool.end',
      'message',
      'status',
      'done',
    ]);
    expect(events.find((event) => event.type === 'checkpoint.resolved')?.action).toBe('modify');
    expect(result.stderr).toContain('approve? ([y]es, [m]odify, [c]ancel)> m\n');
    const modified = JSON.stringify(fake.requests[1].body.messages.at(-1));
    expect(modified).toContain('\\"width\\":2');
    expect(modified).toContain('\\"label\\":\\"wide\\"');

    fake.enqueue(
      {
        content: [
          toolUse('request_human_approval', {
            checkpoint: 'size',
            summary: 'Size?',
            kind: 'approval',
            params: { width: 1, label: 'a' },
          }),
        ],
      },
      { content: [text('ok')] },
    );
    const turnId = await api.startTurn('again');
    await api.pending(turnId);
    expect(await cli(['answer', turnId, 'cp-1', '--modify', 'width=3', 'label=x'])).toMatchObject({
      code: 0,
      stdout: `Answered cp-1 of ${turnId}: modify (by ops).\n`,
    });
    await api.finished(turnId);
    expect(JSON.stringify(fake.requests.at(-1)!.body.messages.at(-1))).toContain('\\"width\\":3');
  });

  it('every command has --help; usage errors exit 2', async () => {
    for (const command of ['chat', 'inbox', 'answer', 'runs', 'skills']) {
      const result = await cli([command, '--help']);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout).toMatch(new RegExp(`^Usage: skillflow ${command}`));
    }
    expect((await cli(['answer', 'turn-x-1', 'cp-1'])).code).toBe(2);
    expect((await cli(['answer', 'turn-x-1', 'cp-1', '--approve', '--cancel'])).code).toBe(2);
    expect((await cli(['runs', 'list'])).code).toBe(2);
    expect((await cli(['inbox', '--limit', 'lots'])).code).toBe(2);
  });
});
