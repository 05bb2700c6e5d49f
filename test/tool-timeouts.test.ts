import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineTool, Type } from '../lib/tools/define-tool';
import { text, toolUse, type FakeAnthropic, type MessagesRequestBody } from './support/fake-anthropic';
import { useWorkerHarness } from './support/harness';
import type { TemporalTestEnv } from './support/temporal';
import { runTurn, startTurn } from './support/turns';

/**
 * A registered tool's own time limits on the real dev server: the attempt's timeout aborts the tool's signal and the
 * model reads an error result; a tool that declares `heartbeat` outlives its heartbeat timeout (the activity beats on
 * its own) and learns of the turn's cancel through its signal. The tool list stays the same, definitions included,
 * while one skill is active (the prompt cache depends on it).
 */
const aborted: string[] = [];
let started: () => void = () => {};

/** Waits until the call's signal aborts (recording it) or `ms` passes. */
const waitFor = (name: string, ms: number, signal: AbortSignal) =>
  new Promise<string>((resolve) => {
    const timer = setTimeout(() => resolve(`${name} finished after ${ms} ms`), ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      aborted.push(name);
      resolve(`${name} aborted`);
    });
  });

const slowLookup = defineTool({
  name: 'slow_lookup',
  description: 'A lookup slower than its time limit.',
  category: 'slow',
  input: Type.Object({}),
  idempotent: true,
  timeout: '1s',
  retry: { maximumAttempts: 1 },
  run: (_input, context) => waitFor('slow_lookup', 20_000, context.signal),
});
const longJob = defineTool({
  name: 'long_job',
  description: 'A job that runs longer than its heartbeat timeout.',
  category: 'slow',
  input: Type.Object({}),
  idempotent: true,
  timeout: '20s',
  heartbeat: '1s',
  run: (_input, context) => waitFor('long_job', 2_500, context.signal),
});
const longWait = defineTool({
  name: 'long_wait',
  description: 'Waits until it is stopped.',
  category: 'slow',
  input: Type.Object({}),
  idempotent: true,
  timeout: '60s',
  heartbeat: '1s',
  run: (_input, context) => {
    started();
    return waitFor('long_wait', 60_000, context.signal);
  },
});

const skillsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-tool-timeout-skills-'));
fs.mkdirSync(path.join(skillsDir, 'slow-helper'));
fs.writeFileSync(
  path.join(skillsDir, 'slow-helper', 'SKILL.md'),
  '---\nname: slow-helper\ndescription: Runs slow tools, for tests.\n---\n\n# Slow helper\n\nRun the tools.\n',
);
fs.writeFileSync(path.join(skillsDir, 'slow-helper', 'skillflow.yaml'), 'tools: [category:slow]\n');

const toolsOf = (body: MessagesRequestBody) => body.tools;
const resultsOf = (body: MessagesRequestBody) =>
  (body.messages.at(-1) as { content: Array<{ type: string; content?: string; is_error?: boolean }> }).content.filter(
    (block) => block.type === 'tool_result',
  );

describe("a registered tool's time limits", () => {
  const harness = useWorkerHarness('tool-timeouts', {
    skillsDir: () => skillsDir,
    deps: () => ({ tools: [slowLookup, longJob, longWait], rootGrants: [] }),
  });
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let taskQueue: string;
  beforeAll(() => ({ env, fake, taskQueue } = harness));
  beforeEach(() => {
    aborted.length = 0;
  });

  it('the attempt timeout aborts the tool and the model reads an error; a heartbeating tool outlives its heartbeat timeout', async () => {
    fake.enqueue(
      { content: [toolUse('load_skill', { name: 'slow-helper' })] },
      { content: [toolUse('slow_lookup', {})] },
      { content: [toolUse('long_job', {})] },
      { content: [text('Done.')] },
    );
    const { result } = await runTurn(env.client, taskQueue, 'look it up');
    expect(result).toMatchObject({ status: 'completed', output: 'Done.' });
    expect(resultsOf(fake.requests[2].body)).toEqual([
      expect.objectContaining({
        is_error: true,
        content: expect.stringMatching(/^slow_lookup failed: .*timed? ?out/i),
      }),
    ]);
    expect(resultsOf(fake.requests[3].body)).toEqual([
      expect.objectContaining({ content: 'long_job finished after 2500 ms' }),
    ]);
    expect(resultsOf(fake.requests[3].body)[0].is_error).toBeUndefined();
    expect(aborted).toEqual(['slow_lookup']);
    // While slow-helper is active, every request offers the same tools, definitions included.
    expect(toolsOf(fake.requests[2].body)).toEqual(toolsOf(fake.requests[1].body));
    expect(toolsOf(fake.requests[3].body)).toEqual(toolsOf(fake.requests[1].body));
  });

  it("a heartbeating tool's signal aborts when the turn is cancelled", async () => {
    const running = new Promise<void>((resolve) => (started = resolve));
    fake.enqueue(
      { content: [toolUse('load_skill', { name: 'slow-helper' })] },
      { content: [toolUse('long_wait', {})] },
    );
    const handle = await startTurn(env.client, taskQueue, 'wait');
    await running;
    await handle.cancel();
    const deadline = Date.now() + 15_000;
    while (!aborted.includes('long_wait') && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(aborted).toEqual(['long_wait']);
    expect(await handle.result()).toMatchObject({ status: 'cancelled' });
  });
});
