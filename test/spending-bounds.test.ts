import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { MemoryTokenLedger } from '../lib/budget';
import { testDeps } from './support/deps';
import {
  startFakeAnthropic,
  text,
  toolUse,
  type FakeAnthropic,
  type MessagesRequestBody,
  type ScriptedMessage,
} from './support/fake-anthropic';
import { TemporalTestEnv } from './support/temporal';
import { runTurn, type TurnOverrides } from './support/turns';

/**
 * Issue 24.6: the daily token budget bounds spending at any depth, and invoke_skill calls are capped per response and
 * per turn. A fan-out: a skill whose model invokes its child many times in one response and across rounds. And 24.12:
 * a turn's own load_skill events carry no depth; a refused invoke_skill names its skill and depth, offered or not.
 */

const writeSkill = (dir: string, name: string, description: string, sidecar: string) => {
  fs.mkdirSync(path.join(dir, name), { recursive: true });
  fs.writeFileSync(
    path.join(dir, name, 'SKILL.md'),
    `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n\nDo the task.\n`,
  );
  fs.writeFileSync(path.join(dir, name, 'skillflow.yaml'), sidecar);
};

/** fanner invokes leaf; loner is nobody's child. */
function library(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-spending-'));
  writeSkill(dir, 'fanner', 'Fans a task out to leaves. Use for fan-out tests.', 'children: [leaf]\n');
  writeSkill(dir, 'leaf', 'Does one small part. Use for fan-out tests.', 'limits:\n  max-iterations: 5\n');
  writeSkill(dir, 'loner', 'Works alone. Use for scope tests.', 'limits:\n  max-iterations: 5\n');
  return dir;
}

const invoke = (skill: string, task = 'part') => toolUse('invoke_skill', { skill, task });
const reply = (content: ScriptedMessage['content'], tokens?: number): ScriptedMessage => ({
  content,
  ...(tokens ? { usage: { input_tokens: tokens, output_tokens: 0 } } : {}),
});

/** The tool results a request carries in its last message: [content, isError]. */
function resultsIn(body: MessagesRequestBody): Array<[string, boolean]> {
  const last = body.messages[body.messages.length - 1] as { content: string | Array<Record<string, unknown>> };
  if (typeof last.content === 'string') return [];
  return last.content.filter((b) => b.type === 'tool_result').map((b) => [String(b.content), b.is_error === true]);
}

const perResponse = (n: number) =>
  `At most ${n} invoke_skill calls run per model response (SKILLFLOW_MAX_INVOCATIONS_PER_RESPONSE); leaf was not invoked. Call it again in a later response if you still need it.`;
const perTurn = (n: number) =>
  `This turn has made its ${n} invoke_skill calls, its skill runs' included (SKILLFLOW_MAX_INVOCATIONS_PER_TURN); leaf was not invoked. Go on without it.`;

describe('spending bounds: the token budget at every depth, invoke_skill caps', () => {
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let client: Client;
  let taskQueue: string;
  const ledger = new MemoryTokenLedger();

  beforeAll(async () => {
    env = await TemporalTestEnv.connect();
    client = env.client;
    fake = await startFakeAnthropic();
    taskQueue = env.newTaskQueue('spending');
    await env.startWorker(taskQueue, { ...testDeps(fake.url, { skillsDir: library() }), budget: { ledger } });
  });
  afterAll(async () => {
    await env?.close();
    await fake?.close();
  });
  beforeEach(() => {
    fake.requests.length = 0;
  });
  afterEach(() => expect(fake.pending).toBe(0));

  const turn = (message: string, overrides: TurnOverrides) => runTurn(client, taskQueue, message, overrides);

  it('fan-out: invoke_skill calls past the per-response and per-turn caps are refused with an error the model reads', async () => {
    fake.enqueue(
      reply([invoke('fanner', 'fan out')]),
      // The fanner asks for three leaves at once: two run (the per-response cap), the third is refused.
      reply([invoke('leaf', 'a'), invoke('leaf', 'b'), invoke('leaf', 'c')]),
      reply([text('a done')]),
      reply([text('b done')]),
      // Its next response: the turn's three calls are made (the fanner's own and its two leaves).
      reply([invoke('leaf', 'd')]),
      reply([text('fanned out')]),
      reply([invoke('leaf', 'e')]),
      reply([text('all done')]),
    );
    const { result } = await turn('fan out', { settings: { maxInvocationsPerResponse: 2, maxInvocationsPerTurn: 3 } });
    expect(result).toMatchObject({ status: 'completed', output: 'all done' });
    const results = fake.requests.map((request) => resultsIn(request.body));
    expect(results[4]).toEqual([
      [JSON.stringify({ skill_id: 'leaf', output: 'a done', success: true }), false],
      [JSON.stringify({ skill_id: 'leaf', output: 'b done', success: true }), false],
      [perResponse(2), true],
    ]);
    expect(results[5]).toEqual([[perTurn(3), true]]);
    expect(results[7]).toEqual([[perTurn(3), true]]);
    expect(result.skills?.map((run) => run.skill)).toEqual(['fanner', 'leaf', 'leaf']);
  });

  it('fan-out: a budget used up mid-tree stops each run before its next model round, the deepest first', async () => {
    fake.enqueue(
      reply([invoke('fanner', 'fan out')], 300),
      reply([invoke('leaf', 'a')], 300),
      // The leaf was handed 1,000 - 300 - 300 = 400 tokens; this round takes 450.
      reply([toolUse('read_file', { skill: 'leaf', path: 'missing.md' })], 450),
    );
    const { result } = await turn('fan out', {
      tokenBudget: 1_000,
      userId: 'fan-budget',
      createdAt: '2026-11-28T12:00:00.000Z',
    });
    expect(fake.requests).toHaveLength(3);
    expect(result).toMatchObject({ status: 'failed', reason: 'token_budget', usage: { inputTokens: 1_050 } });
    expect(result.error?.message).toMatch(
      /^The turn used 1,050 model tokens, reaching the 1,000 left of the user's daily budget/,
    );
    expect(
      result.skills?.map((run) => [run.skill, run.status, run.error?.code, run.error?.message.split(' of ')[0]]),
    ).toEqual([
      [
        'fanner',
        'failed',
        'token_budget',
        'The skill run used 750 model tokens, reaching the 700 its invoker had left',
      ],
      ['leaf', 'failed', 'token_budget', 'The skill run used 450 model tokens, reaching the 400 its invoker had left'],
    ]);
  });

  it("turns running at once share the user's remainder: a round finds nothing left while another turn holds it", async () => {
    const day = '2026-11-28';
    const user = 'shared-remainder';
    const createdAt = `${day}T12:00:00.000Z`;
    // Another turn of the user, given the same 1,000 left, holds all of it for a round under way.
    const other = { user, day, turn: 'other-turn' };
    expect(await ledger.reserve({ scope: other, left: 1_000, tokens: 1_000 })).toEqual({
      granted: true,
      tokens: 1_000,
    });
    const blocked = await turn('hello', { tokenBudget: 1_000, userId: user, createdAt });
    expect(fake.requests).toHaveLength(0);
    expect(blocked.result).toMatchObject({ status: 'failed', reason: 'token_budget', usage: { inputTokens: 0 } });
    expect(blocked.result.error?.message).toMatch(
      /^The user's daily token budget \(SKILLFLOW_USER_DAILY_TOKENS\) is used up, by this turn and the user's other turns running at the same time/,
    );

    // Its round used 600: a turn the API then gives the 400 left may spend them.
    await ledger.settle({ scope: other, reserved: 1_000, used: 600 });
    fake.enqueue(reply([text('hi')], 100));
    const next = await turn('hello again', { tokenBudget: 400, userId: user, createdAt });
    expect(next.result).toMatchObject({ status: 'completed', output: 'hi' });
    expect(await ledger.reserve({ scope: other, left: 0, tokens: 1_000 })).toEqual({ granted: true, tokens: 300 });
  });

  it("24.12: a turn's own load_skill carries no depth; an invoke_skill refused past the depth cap names its skill and depth as one outside the children does", async () => {
    fake.enqueue(
      reply([toolUse('load_skill', { name: 'leaf' })]),
      reply([invoke('fanner', 'nest')]),
      // The fanner (depth 1) invokes its child and a skill that is not its child.
      reply([invoke('leaf', 'part'), invoke('loner', 'not mine')]),
      // The leaf runs at the depth cap (2), so it is not offered invoke_skill; it calls it anyway.
      reply([invoke('loner', 'too deep')]),
      reply([text('leaf done')]),
      reply([text('fanner done')]),
      reply([text('done')]),
    );
    const { result, events } = await turn('nest', { settings: { maxSkillDepth: 2 } });
    expect(result).toMatchObject({ status: 'completed', output: 'done' });
    const loads = events.filter((e) => (e.type === 'tool.start' || e.type === 'tool.end') && e.name === 'load_skill');
    expect(loads.map((e) => [e.type, 'isSkill' in e && e.isSkill, 'depth' in e])).toEqual([
      ['tool.start', true, false],
      ['tool.end', true, false],
    ]);
    const refused = events.filter((e) => (e.type === 'tool.start' || e.type === 'tool.end') && e.name === 'loner');
    // The leaf's call (inside the fanner's call of it) comes first.
    expect(refused.map((e) => [e.type, 'isSkill' in e && e.isSkill, e.depth])).toEqual([
      ['tool.start', true, 3],
      ['tool.end', true, 3],
      ['tool.start', true, 2],
      ['tool.end', true, 2],
    ]);
    expect(resultsIn(fake.requests[4].body)).toEqual([
      [
        'Skill runs nest at most 2 deep (SKILLFLOW_MAX_SKILL_DEPTH); invoking loner here would run it at depth 3.',
        true,
      ],
    ]);
    expect(resultsIn(fake.requests[5].body)[1]).toEqual([
      'Skill fanner may invoke only its children (leaf); loner is not one of them.',
      true,
    ]);
  });
});
