import { internalError } from '../core/errors';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { idempotencyKeyOf } from '../core/tools';
import { defineTool, ToolError, Type } from '../lib/tools/define-tool';
import { text, toolUse, type FakeAnthropic, type MessagesRequestBody } from './support/fake-anthropic';
import { useWorkerHarness } from './support/harness';
import type { TemporalTestEnv } from './support/temporal';
import { answerNext, eventsOf, runTurn, startTurn } from './support/turns';
import { answerCheckpointUpdate, turnStateQuery } from '../workflows/definitions';

/**
 * Registered tools in turns on the real dev server: registration, the tool list the model gets at each round as the
 * active skill changes, validation errors, scoping refusals (by name and by category), approval (approve, modify with
 * re-validation, cancel) and an idempotency key that stays the same across an activity retry.
 */
const engineTools = [
  'load_skill',
  'load_subskill',
  'read_file',
  'list_skills',
  'invoke_skill',
  'submit_output',
  'request_human_approval',
];

const posted: Array<{ input: unknown; key?: string }> = [];
const writes: Array<{ key?: string; attempt: number }> = [];
const postNote = defineTool({
  name: 'post_note',
  description: 'Post a note to a team channel.',
  category: 'ops',
  input: Type.Object(
    { text: Type.String({ maxLength: 40 }), channel: Type.String({ default: 'ops' }) },
    { additionalProperties: false },
  ),
  idempotent: false,
  needsApproval: true,
  run(input, context) {
    posted.push({ input, key: context.idempotencyKey });
    return `Posted to #${input.channel}: ${input.text}`;
  },
});
const flakyWrite = defineTool({
  name: 'flaky_write',
  description: 'Write a record; the first attempt of each call fails.',
  category: 'ops',
  input: Type.Object({ record: Type.String() }, { additionalProperties: false }),
  idempotent: false,
  retry: { maximumAttempts: 3, initialInterval: 100 },
  run({ record }, context) {
    writes.push({ key: context.idempotencyKey, attempt: context.attempt });
    if (context.attempt === 1) throw new Error('connection reset');
    return `wrote ${record}`;
  },
});
const alwaysFails = defineTool({
  name: 'always_fails',
  description: 'Fails.',
  category: 'ops',
  input: Type.Object({}),
  idempotent: true,
  retry: { maximumAttempts: 2, initialInterval: 50 },
  run() {
    throw new Error('the service is down');
  },
});
const refuses = defineTool({
  name: 'refuses',
  description: 'Says no.',
  category: 'ops',
  input: Type.Object({}),
  idempotent: true,
  run() {
    throw new ToolError('No such record.');
  },
});

function writeSkill(root: string, name: string, frontmatter: string, sidecar?: string): void {
  const dir = path.join(root, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'SKILL.md'),
    `---\nname: ${name}\ndescription: The ${name} skill, for tests.\n${frontmatter}---\n\n# ${name}\n\nDo the task.\n`,
  );
  if (sidecar) fs.writeFileSync(path.join(dir, 'skillflow.yaml'), sidecar);
}

const skillsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-tool-skills-'));
writeSkill(skillsDir, 'math-helper', 'allowed-tools: "calculator Bash(git:*)"\n');
writeSkill(skillsDir, 'ops-helper', '', 'tools: [category:ops]\n');
writeSkill(skillsDir, 'web-helper', '', 'tools: [category:web, calculator]\n');
writeSkill(skillsDir, 'plain-helper', '');

const toolNames = (body: MessagesRequestBody) => (body.tools as Array<{ name: string }>).map((tool) => tool.name);
const resultsOf = (body: MessagesRequestBody) =>
  (
    body.messages.at(-1) as {
      content: Array<{ type: string; content?: string; is_error?: boolean; tool_use_id?: string }>;
    }
  ).content.filter((block) => block.type === 'tool_result');

describe('registered tools in turns', () => {
  const harness = useWorkerHarness('tools', {
    skillsDir: () => skillsDir,
    deps: () => ({ tools: [postNote, flakyWrite, alwaysFails, refuses], rootGrants: ['calculator'] }),
  });
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let taskQueue: string;
  beforeAll(() => ({ env, fake, taskQueue } = harness));
  beforeEach(() => {
    posted.length = 0;
    writes.length = 0;
  });

  it('offers the tools in scope at each round: the root default, then each skill its own grants', async () => {
    fake.enqueue(
      { content: [toolUse('calculator', { expression: '(1200 * 0.035) / 12' })] },
      { content: [toolUse('load_skill', { name: 'web-helper' })] },
      { content: [toolUse('load_skill', { name: 'ops-helper' })] },
      { content: [toolUse('load_skill', { name: 'plain-helper' })] },
      { content: [toolUse('load_skill', { name: 'math-helper' })] },
      { content: [text('Done.')] },
    );
    const { result, events } = await runTurn(env.client, taskQueue, 'compute');
    expect(result).toMatchObject({ status: 'completed', output: 'Done.' });
    expect(fake.requests.map((request) => toolNames(request.body))).toEqual([
      [...engineTools, 'calculator'],
      [...engineTools, 'calculator'],
      [...engineTools, 'calculator', 'http_fetch'],
      [...engineTools, 'post_note', 'flaky_write', 'always_fails', 'refuses'],
      engineTools,
      [...engineTools, 'calculator'],
    ]);
    expect(resultsOf(fake.requests[1].body)).toEqual([
      expect.objectContaining({ content: '(1200 * 0.035) / 12 = 3.5' }),
    ]);
    expect(resultsOf(fake.requests[1].body)[0].is_error).toBeUndefined();
    const calculatorEnd = events.find((event) => event.type === 'tool.end' && event.name === 'calculator');
    expect(calculatorEnd).toMatchObject({ source: 'builtin', isError: false });
    expect(events.find((event) => event.type === 'tool.start' && event.name === 'load_skill')).toMatchObject({
      source: 'engine',
    });
    // The same list is sent while a skill stays active (the prompt cache holds).
    const definition = (fake.requests[0].body.tools as Array<{ name: string; input_schema: unknown }>).find(
      (tool) => tool.name === 'calculator',
    );
    expect(definition?.input_schema).toEqual({
      type: 'object',
      properties: { expression: expect.objectContaining({ type: 'string', maxLength: 1000 }) },
      required: ['expression'],
      additionalProperties: false,
    });
  });

  it('an invalid input is an error result naming the fields; the turn goes on', async () => {
    fake.enqueue(
      { content: [toolUse('calculator', { expr: '1+1' })] },
      { content: [toolUse('calculator', { expression: '2 +' })] },
      { content: [text('Sorry.')] },
    );
    const { result } = await runTurn(env.client, taskQueue, 'compute');
    expect(result).toMatchObject({ status: 'completed', output: 'Sorry.' });
    expect(resultsOf(fake.requests[1].body)[0]).toMatchObject({
      is_error: true,
      content:
        'calculator was not run: its input is not valid: expr is not allowed here; the allowed names are expression; expression is required. Fix the input and call it again.',
    });
    expect(resultsOf(fake.requests[2].body)[0]).toMatchObject({
      is_error: true,
      content: expect.stringMatching(
        /^Cannot evaluate "2 \+": Expected a number, a name or "\(" but found the end of the expression at position 4/,
      ),
    });
  });

  it("a tool outside the active skill's scope is refused as a plan violation, by name and by category", async () => {
    fake.enqueue(
      { content: [toolUse('http_fetch', { url: 'https://example.com/' })] },
      { content: [toolUse('load_skill', { name: 'plain-helper' })] },
      { content: [toolUse('calculator', { expression: '1+1' })] },
      { content: [toolUse('load_skill', { name: 'web-helper' })] },
      { content: [toolUse('post_note', { text: 'hi' })] },
    );
    const { result } = await runTurn(env.client, taskQueue, 'try everything', { settings: { maxPlanViolations: 3 } });
    expect(resultsOf(fake.requests[1].body)[0]).toMatchObject({
      is_error: true,
      content:
        'Tool http_fetch is not available before a skill is loaded: the tools granted now are calculator. Use only the tools you were given.',
    });
    expect(resultsOf(fake.requests[3].body)[0]).toMatchObject({
      is_error: true,
      content:
        "Tool calculator is not available while skill plain-helper is active: no tools are granted now beyond the engine's own. Use only the tools you were given.",
    });
    // The third violation ends the turn, like any plan violation.
    expect(result).toMatchObject({ status: 'failed', reason: 'plan_violations' });
  });

  it('a tool that needs approval: approved, it runs with the proposed input; modified, with the changed one', async () => {
    fake.enqueue(
      { content: [toolUse('load_skill', { name: 'ops-helper' })] },
      { content: [toolUse('post_note', { text: 'Deploy at 5' })] },
      { content: [toolUse('post_note', { text: 'Deploy at 6', channel: 'dev' })] },
      { content: [text('Both posted.')] },
    );
    const handle = await startTurn(env.client, taskQueue, 'post the notes');
    const first = await answerNext(handle, { action: 'approve' });
    expect(first).toMatchObject({
      name: 'tool:post_note',
      kind: 'approval',
      params: { text: 'Deploy at 5', channel: 'ops' },
      actions: ['approve', 'modify', 'cancel'],
      tool: { name: 'post_note' },
    });
    expect(first.paramsSchema).toMatchObject({ properties: { text: { maxLength: 40 } } });
    const second = await waitForPending(handle, first.id);
    // A changed input is validated again: too long a text is rejected, and the checkpoint keeps waiting.
    const rejected = await decide(handle, second.id, { action: 'modify', overrides: { text: 'x'.repeat(41) } }).catch(
      (err: Error) => err,
    );
    expect((rejected as Error & { cause?: Error }).cause?.message).toBe(
      'overrides.text is 41 characters long, longer than 40.',
    );
    await decide(handle, second.id, {
      action: 'modify',
      overrides: { channel: 'releases' },
      note: 'Use the releases channel.',
    });
    expect(await handle.result()).toMatchObject({ status: 'completed', output: 'Both posted.' });
    expect(posted.map((call) => call.input)).toEqual([
      { text: 'Deploy at 5', channel: 'ops' },
      { text: 'Deploy at 6', channel: 'releases' },
    ]);
    expect(resultsOf(fake.requests[2].body)[0]).toMatchObject({ content: 'Posted to #ops: Deploy at 5' });
    expect(resultsOf(fake.requests[3].body)[0].content).toBe(
      'Before post_note ran, the human changed its input to {"text":"Deploy at 6","channel":"releases"} and said: Use the releases channel.\n\nPosted to #releases: Deploy at 6',
    );
    // Non-idempotent: each call has its own key.
    expect(new Set(posted.map((call) => call.key)).size).toBe(2);
  });

  it('a tool call the human cancels does not run; the model is told and the turn goes on', async () => {
    fake.enqueue(
      { content: [toolUse('load_skill', { name: 'ops-helper' })] },
      { content: [toolUse('post_note', { text: 'Deploy now' })] },
      { content: [text('Not posted.')] },
    );
    const handle = await startTurn(env.client, taskQueue, 'post');
    await answerNext(handle, { action: 'cancel' });
    expect(await handle.result()).toMatchObject({ status: 'completed', output: 'Not posted.' });
    expect(posted).toEqual([]);
    expect(JSON.parse(resultsOf(fake.requests[2].body)[0].content!)).toMatchObject({ cancelled: true, ran: false });
    const events = await eventsOf(handle);
    expect(events.filter((event) => event.type === 'checkpoint.requested')).toHaveLength(1);
    expect(events.find((event) => event.type === 'tool.end' && event.name === 'post_note')).toMatchObject({
      isError: false,
      source: 'builtin',
    });
  });

  it('a non-idempotent tool keeps its idempotency key across an activity retry', async () => {
    fake.enqueue(
      { content: [toolUse('load_skill', { name: 'ops-helper' })] },
      { content: [toolUse('flaky_write', { record: 'r1' }, 'toolu_write_1')] },
      { content: [text('Written.')] },
    );
    const handle = await startTurn(env.client, taskQueue, 'write');
    expect(await handle.result()).toMatchObject({ status: 'completed' });
    expect(writes.map((write) => write.attempt)).toEqual([1, 2]);
    expect(writes[0].key).toBe(idempotencyKeyOf(handle.workflowId, 'toolu_write_1'));
    expect(writes[1].key).toBe(writes[0].key);
    expect(resultsOf(fake.requests[2].body)[0]).toMatchObject({ content: 'wrote r1' });
  });

  it('a tool that keeps failing, and a ToolError, are error results the model sees', async () => {
    fake.enqueue(
      { content: [toolUse('load_skill', { name: 'ops-helper' })] },
      { content: [toolUse('always_fails', {}), toolUse('refuses', {})] },
      { content: [text('Both failed.')] },
    );
    const { result } = await runTurn(env.client, taskQueue, 'fail');
    expect(result).toMatchObject({ status: 'completed', output: 'Both failed.' });
    expect(resultsOf(fake.requests[2].body)).toEqual([
      // A plain error is not for the model (issue 13.11): it gets the generic internal error; a ToolError's message passes.
      expect.objectContaining({ is_error: true, content: `always_fails failed: ${internalError.message}` }),
      expect.objectContaining({ is_error: true, content: 'No such record.' }),
    ]);
  });
});

const decide = (handle: WorkflowHandle, checkpointId: string, decision: Record<string, unknown>) =>
  handle.executeUpdate(answerCheckpointUpdate.name, { args: [{ checkpointId, by: 'tester', ...decision }] });

async function waitForPending(handle: WorkflowHandle, afterId: string) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const pending = (await handle.query(turnStateQuery)).pendingCheckpoint;
    if (pending && pending.id !== afterId) return pending;
    if (Date.now() > deadline) throw new Error('no second checkpoint');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
