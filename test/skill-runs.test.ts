import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import type { TurnEvent } from '../core/events';
import { basePrompt } from '../core/prompts';
import type { SkillRunResult } from '../core/skill-runs';
import { InProcessChannel } from '../lib/live';
import { SkillRegistry } from '../lib/skills';
import { livePublisher } from '../worker/model-deps';
import { checkpointDecisionSignal, turnEventsQuery, turnStateQuery, workflowTypes } from '../workflows/definitions';
import { authHeaders, buildTestApp, eventually, operatorKey } from './support/api';
import { currentDetails, pastedAnswers } from './support/current-details';
import { bundledSkillsDir, testDeps } from './support/deps';
import { examOutput } from './support/exam-script';
import {
  startFakeAnthropic,
  text,
  toolUse,
  type FakeAnthropic,
  type MessagesRequestBody,
  type ScriptedMessage,
} from './support/fake-anthropic';
import { ApiDriver } from './support/scenario';
import { SseClient, type Json } from './support/stream-clients';
import { TemporalTestEnv } from './support/temporal';
import { eventsOf, runTurn, startTurn } from './support/turns';

/**
 * Hierarchical skills on the real dev server (issue 11; seed 003's tests "in spirit"): invoke_skill runs a skill as a
 * child workflow with a fresh conversation, typed parameters, a validated output, limits, nesting and its own human
 * checkpoints answered through the turn; the turn's stream, state, records and search attributes show it all.
 */

const writeSkill = (dir: string, name: string, description: string, body: string, sidecar: string) => {
  fs.mkdirSync(path.join(dir, name), { recursive: true });
  fs.writeFileSync(
    path.join(dir, name, 'SKILL.md'),
    `---\nname: ${name}\ndescription: ${description}\n---\n\n${body}\n`,
  );
  fs.writeFileSync(path.join(dir, name, 'skillflow.yaml'), sidecar);
};

/** The bundled library plus small skills that invoke each other: lead → researcher → checker, and two limited ones. */
function library(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-skill-runs-'));
  fs.cpSync(bundledSkillsDir, dir, { recursive: true });
  writeSkill(
    dir,
    'lead',
    'Leads a research task and summarises it. Use for research questions.',
    '# Lead\n\nDelegate the research to researcher, then summarise.',
    [
      'parameters:',
      '  topic: { type: string, description: The topic. }',
      'output:',
      '  summary: { type: string, description: The summary. }',
      'children: [researcher]',
      '',
    ].join('\n'),
  );
  writeSkill(
    dir,
    'researcher',
    'Finds facts about one question. Use to research a single question.',
    '# Researcher\n\nFind facts; have doubtful claims checked.',
    [
      'parameters:',
      '  question: { type: string, description: What to find out. }',
      '  max_sources: { type: integer, minimum: 1, maximum: 10, default: 3, description: Sources to use. }',
      '  style: { type: string, enum: [brief, full], default: brief, description: How much to say. }',
      'output:',
      '  facts: { type: array, items: string, description: The facts found. }',
      '  confidence: { type: number, minimum: 0, maximum: 1, description: How sure the researcher is. }',
      'children: [checker]',
      '',
    ].join('\n'),
  );
  writeSkill(
    dir,
    'checker',
    'Has a human confirm a claim. Use when a claim needs a person to vouch for it.',
    '# Checker\n\nAsk the human to confirm the claim with checkpoint confirm.',
    [
      'parameters:',
      '  claim: { type: string, description: The claim to check. }',
      'checkpoints:',
      '  confirm:',
      '    kind: approval',
      '    params:',
      '      claim: { type: string, description: The claim to confirm. }',
      '',
    ].join('\n'),
  );
  writeSkill(
    dir,
    'looper',
    'Works in short loops. Use for tests of limits.',
    '# Looper\n\nLook things up, one at a time.',
    'limits:\n  max-iterations: 2\ntools: [calculator]\n',
  );
  writeSkill(
    dir,
    'sleeper',
    'Works slowly. Use for tests of limits.',
    '# Sleeper\n\nTake your time.',
    'limits:\n  timeout: 1s\n',
  );
  return dir;
}

const invoke = (skill: string, task: string, extra: Record<string, unknown> = {}, id?: string) =>
  toolUse('invoke_skill', { skill, task, ...extra }, id);
const reply = (...content: ScriptedMessage['content']): ScriptedMessage => ({ content });
const json = (value: unknown) => text(JSON.stringify(value));

/** The tool results a request carries in its last message: [content, isError]. */
function resultsIn(body: MessagesRequestBody): Array<[string, boolean]> {
  const last = body.messages[body.messages.length - 1] as { content: string | Array<Record<string, unknown>> };
  if (typeof last.content === 'string') return [];
  return last.content.filter((b) => b.type === 'tool_result').map((b) => [String(b.content), b.is_error === true]);
}
const textsIn = (body: MessagesRequestBody): string[] => {
  const last = body.messages[body.messages.length - 1] as { content: string | Array<Record<string, unknown>> };
  return typeof last.content === 'string'
    ? [last.content]
    : last.content.filter((b) => b.type === 'text').map((b) => String(b.text));
};
const systemOf = (body: MessagesRequestBody) => (body.system as Array<{ text: string }>).map((block) => block.text);
const toolNames = (body: MessagesRequestBody) => (body.tools as Array<{ name: string }>).map((tool) => tool.name);
/** Messages without the cache markers the worker adds. */
const plainMessages = (body: MessagesRequestBody) =>
  JSON.parse(JSON.stringify(body.messages).replace(/,"cache_control":\{"type":"ephemeral"\}/g, ''));

describe('hierarchical skills: invoke_skill runs a skill as a child workflow of the turn', () => {
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let live: InProcessChannel;
  let client: Client;
  let taskQueue: string;
  let app: FastifyInstance;
  let api: ApiDriver;
  let base: string;
  const skillsDir = library();

  beforeAll(async () => {
    env = await TemporalTestEnv.connect();
    client = env.client;
    fake = await startFakeAnthropic();
    live = new InProcessChannel();
    taskQueue = env.newTaskQueue('skill-runs');
    const deps = testDeps(fake.url, { skillsDir });
    await env.startWorker(taskQueue, { ...deps, model: { ...deps.model, publishDelta: livePublisher(live) } });
    const skills = new SkillRegistry({ skillsDir, storeDir: fs.mkdtempSync(path.join(os.tmpdir(), 'sf-store-')) });
    ({ app } = await buildTestApp(client, taskQueue, {}, { live, skills }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    api = new ApiDriver(app);
  });
  afterAll(async () => {
    await app?.close();
    await live?.close();
    await env?.close();
    await fake?.close();
  });
  beforeEach(() => {
    fake.respond(undefined);
    fake.requests.length = 0;
  });
  afterEach(() => expect(fake.pending).toBe(0));

  /** The skill runs under a turn, as Temporal's visibility lists them (it lags a moment behind). */
  async function skillRunsOf(turnId: string, count: number) {
    return eventually(
      async () => {
        const found = [];
        for await (const execution of client.workflow.list({ query: `SkillflowTurn = '${turnId}'` }))
          found.push(execution);
        return found.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
      },
      (found) => found.length === count && found.every((execution) => execution.status.name !== 'RUNNING'),
    );
  }
  const skillEvents = (events: TurnEvent[]) =>
    events
      .filter((e) => e.type === 'tool.start' || e.type === 'tool.end')
      .map((e) => [
        e.type,
        e.type === 'tool.start' || e.type === 'tool.end' ? e.name : '',
        e.depth ?? 0,
        'isSkill' in e ? e.isSkill : undefined,
      ]);

  it("seed 003: the child's conversation is fresh: system agent, system skill and its children, the history, the task; nothing of the parent", async () => {
    const history = [
      { role: 'user', content: 'We are writing about the Danube.' },
      { role: 'assistant', content: 'Noted: the Danube.' },
    ];
    fake.enqueue(
      reply(
        text('Handing this to the lead.'),
        invoke(
          'lead',
          'Summarise what is known about the Danube delta.',
          { params: { topic: 'Danube' }, history },
          'toolu_parent_call',
        ),
      ),
      reply(json({ summary: 'A wetland of 5,800 km².' })),
      reply(text('The lead says: a wetland of 5,800 km².')),
    );
    const { result, events } = await runTurn(client, taskQueue, 'PARENT-ONLY question about rivers', {
      history: [{ user: 'PARENT-ONLY earlier question', assistant: 'PARENT-ONLY earlier answer' }],
    });
    expect(result).toMatchObject({ status: 'completed', output: 'The lead says: a wetland of 5,800 km².' });

    const child = fake.requests[1].body;
    // system: the base agent prompt, then the skill's instructions with the skills it may invoke (name: description).
    const [agent, skillBlock] = systemOf(child);
    expect(systemOf(child)).toHaveLength(2);
    expect(agent).toBe(basePrompt);
    expect(skillBlock).toMatch(/^# Skill run: lead \(depth 1\)\n/);
    expect(skillBlock).toContain('# Lead\n\nDelegate the research to researcher, then summarise.');
    expect(skillBlock).toContain(
      'Skills you may invoke with invoke_skill (name: description; parameters as JSON Schema):\n- researcher: Finds facts about one question. Use to research a single question. Parameters: {',
    );
    expect(skillBlock).toContain('Parameters of this run (validated, declared defaults filled in): {"topic":"Danube"}');
    expect(skillBlock).toContain('one JSON object that matches the Output schema above');
    // messages: the history as given, then the task as the user's message; nothing of the parent conversation.
    expect(plainMessages(child)).toEqual([
      { role: 'user', content: 'We are writing about the Danube.' },
      { role: 'assistant', content: 'Noted: the Danube.' },
      { role: 'user', content: [{ type: 'text', text: 'Summarise what is known about the Danube delta.' }] },
    ]);
    expect(JSON.stringify(child)).not.toContain('PARENT-ONLY');
    expect(JSON.stringify(child)).not.toContain('toolu_parent_call');
    expect(JSON.stringify(child)).not.toContain('Handing this to the lead');
    // the child's tools: its own, and invoke_skill for its children only.
    expect(toolNames(child)).toEqual(['load_subskill', 'read_file', 'invoke_skill', 'request_human_approval']);
    const invokeTool = (
      child.tools as Array<{ name: string; input_schema: { properties: { skill: { enum: string[] } } } }>
    ).find((t) => t.name === 'invoke_skill')!;
    expect(invokeTool.input_schema.properties.skill.enum).toEqual(['researcher']);

    // The parent gets seed 002's result; its own conversation goes on from it.
    expect(resultsIn(fake.requests[2].body)).toEqual([
      [JSON.stringify({ skill_id: 'lead', output: { summary: 'A wetland of 5,800 km².' }, success: true }), false],
    ]);
    // Skill events carry isSkill, depth and input {task, params}; the child's own events carry its depth.
    const start = events.find((e) => e.type === 'tool.start')!;
    expect(start).toMatchObject({
      name: 'lead',
      isSkill: true,
      depth: 1,
      callId: 'toolu_parent_call',
      input: { task: 'Summarise what is known about the Danube delta.', params: { topic: 'Danube' }, history },
    });
    expect(events.find((e) => e.type === 'tool.end')).toMatchObject({
      name: 'lead',
      isSkill: true,
      depth: 1,
      isError: false,
      result: { success: true },
    });
    expect(events.filter((e) => e.depth === 1).map((e) => e.type)).toEqual([
      'tool.start',
      'message',
      'artifact',
      'tool.end',
    ]);
    expect(events.find((e) => e.type === 'artifact')).toMatchObject({
      name: 'lead',
      mimeType: 'application/json',
      data: { summary: 'A wetland of 5,800 km².' },
      callId: 'toolu_parent_call',
      depth: 1,
    });
    expect(result.artifacts).toEqual([
      {
        name: 'lead',
        mimeType: 'application/json',
        data: { summary: 'A wetland of 5,800 km².' },
        callId: 'toolu_parent_call',
        depth: 1,
      },
    ]);
  });

  it('validation comes before anything starts: every invalid call is an error result listing the problems and the expected parameters', async () => {
    const calls = [
      invoke('researcher', '', { params: { question: 'q' } }),
      toolUse('invoke_skill', { skill: 'researcher', params: { question: 'q' } }),
      invoke('researcher', 'find', { params: { question: 'q', max_sources: 11, style: 'long' } }),
      invoke('researcher', 'find', { params: { max_sources: 'three', colour: 'red' } }),
      invoke('researcher', 'find', { params: { question: 'q' }, history: [{ role: 'assistant', content: 'hi' }] }),
      invoke('researcher', 'find', { params: { question: 'q' }, history: [{ role: 'user', content: 'hi' }] }),
      invoke('researcher', 'find', {
        params: { question: 'q' },
        history: [
          { role: 'system', content: 'obey' },
          { role: 'assistant', content: '' },
        ],
      }),
      invoke('researcher', 'find', { params: 'question=q' }),
      invoke('reseacher', 'find'),
    ];
    fake.enqueue(reply(...calls), reply(text('Nothing could be started.')));
    const { result, events } = await runTurn(client, taskQueue, 'research, badly');
    expect(result).toMatchObject({ status: 'completed' });
    expect(result.skills).toBeUndefined();
    expect(fake.requests).toHaveLength(2); // no skill run called the model

    const results = resultsIn(fake.requests[1].body);
    expect(results.every(([, isError]) => isError)).toBe(true);
    const parsed = results.slice(0, 8).map(([content]) => JSON.parse(content));
    const paths = parsed.map((r) => r.problems.map((p: { path: string; rule: string }) => `${p.path}:${p.rule}`));
    expect(paths).toEqual([
      ['task:required'],
      ['task:required'],
      ['params.max_sources:maximum', 'params.style:enum'],
      ['params.max_sources:type', 'params.colour:additionalProperties', 'params.question:required'],
      ['history[0].role:enum', 'history:required'],
      ['history:required'],
      ['history[0].role:enum', 'history[1].content:required'],
      ['params:type'],
    ]);
    for (const invalid of parsed) {
      expect(invalid).toMatchObject({
        skill_id: 'researcher',
        success: false,
        error: expect.stringMatching(/^Invalid invoke_skill call, nothing was started: /),
      });
      expect(invalid.expected_parameters.map((p: { name: string }) => p.name)).toEqual([
        'question',
        'max_sources',
        'style',
      ]);
    }
    expect(parsed[2].expected_parameters[1]).toEqual({
      name: 'max_sources',
      type: 'integer',
      description: 'Sources to use.',
      required: false,
      default: 3,
      minimum: 1,
      maximum: 10,
    });
    expect(parsed[2].error).toBe(
      'Invalid invoke_skill call, nothing was started: params.max_sources is 11, above the maximum 10; params.style is "long", not one of "brief", "full".',
    );
    // A skill that is not in the catalog is refused before the tool runs.
    expect(results[8][0]).toMatch(/^No skill named "reseacher"\. Did you mean "researcher"\?/);
    expect(
      events
        .filter((e) => e.type === 'tool.start')
        .map((e) => (e.type === 'tool.start' ? [e.name, e.isSkill, e.depth] : [])),
    ).toEqual([...Array(8).fill(['researcher', true, 1]), ['reseacher', true, 1]]);
  });

  it('nested depth 2: events carry their depth, the turn keeps both execution records, and visibility finds both runs', async () => {
    fake.enqueue(
      reply(invoke('lead', 'Research the Danube delta.', { params: { topic: 'Danube' } })),
      reply(
        text('Asking the researcher.'),
        invoke('researcher', 'How large is the Danube delta?', { params: { question: 'size' } }),
      ),
      reply(json({ facts: ['5,800 km²'], confidence: 0.9 })),
      reply(json({ summary: 'It covers 5,800 km².' })),
      reply(text('Done.')),
    );
    const handle = await startTurn(client, taskQueue, 'Tell me about the Danube delta.');
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', output: 'Done.' });
    const events = await eventsOf(handle);
    expect(skillEvents(events)).toEqual([
      ['tool.start', 'lead', 1, true],
      ['tool.start', 'researcher', 2, true],
      ['tool.end', 'researcher', 2, true],
      ['tool.end', 'lead', 1, true],
    ]);
    expect(
      events.filter((e) => e.type === 'message').map((e) => [e.type === 'message' ? e.text : '', e.depth ?? 0]),
    ).toEqual([
      ['Asking the researcher.', 1],
      ['{"facts":["5,800 km²"],"confidence":0.9}', 2],
      ['{"summary":"It covers 5,800 km²."}', 1],
      ['Done.', 0],
    ]);
    // The grandchild saw only its own task, with the lead's call as its caller.
    expect(plainMessages(fake.requests[2].body)).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'How large is the Danube delta?' }] },
    ]);
    expect(systemOf(fake.requests[2].body)[1]).toMatch(/^# Skill run: researcher \(depth 2\)/);
    expect(systemOf(fake.requests[2].body)[1]).toContain('- checker: Has a human confirm a claim.');
    expect(toolNames(fake.requests[2].body)).toEqual([
      'load_subskill',
      'read_file',
      'invoke_skill',
      'request_human_approval',
    ]);

    const turnId = handle.workflowId;
    const [lead, researcher] = result.skills!;
    expect(lead).toMatchObject({
      skill: 'lead',
      depth: 1,
      parentWorkflowId: turnId,
      status: 'completed',
      params: { topic: 'Danube' },
      output: { summary: 'It covers 5,800 km².' },
      error: null,
    });
    expect(researcher).toMatchObject({
      skill: 'researcher',
      depth: 2,
      parentWorkflowId: lead.workflowId,
      status: 'completed',
      task: 'How large is the Danube delta?',
      params: { question: 'size', max_sources: 3, style: 'brief' },
      output: { facts: ['5,800 km²'], confidence: 0.9 },
    });
    expect(lead.workflowId).toBe(`${turnId}/lead/${lead.callId}`);
    expect(researcher.workflowId).toBe(`${lead.workflowId}/researcher/${researcher.callId}`);
    expect(lead.durationMs).toBeGreaterThanOrEqual(researcher.durationMs!);
    expect(Date.parse(lead.endedAt!) - Date.parse(lead.startedAt)).toBe(lead.durationMs);
    // Usage: the turn counts its runs' model calls (5 calls of 10 input tokens each, as the fake reports them).
    expect(result.usage.inputTokens).toBe(50);
    expect(lead.usage.inputTokens).toBe(30);
    expect(researcher.usage.inputTokens).toBe(10);

    const listed = await skillRunsOf(turnId, 2);
    expect(
      listed.map((e) => [
        e.type,
        e.workflowId,
        e.searchAttributes.SkillflowSkill,
        e.searchAttributes.SkillflowDepth,
        e.searchAttributes.SkillflowStatus,
      ]),
    ).toEqual([
      [workflowTypes.skillRun, lead.workflowId, ['lead'], ['1'], ['completed']],
      [workflowTypes.skillRun, researcher.workflowId, ['researcher'], ['2'], ['completed']],
    ]);
    expect(listed[1].memo).toMatchObject({
      task: 'How large is the Danube delta?',
      params: { question: 'size', max_sources: 3, style: 'brief' },
      status: 'completed',
      success: true,
      output: { facts: ['5,800 km²'], confidence: 0.9 },
    });
    expect(listed[1].parentExecution?.workflowId).toBe(lead.workflowId);
    const byParent = [];
    for await (const e of client.workflow.list({ query: `ParentWorkflowId = '${lead.workflowId}'` }))
      byParent.push(e.workflowId);
    expect(byParent).toEqual([researcher.workflowId]);
    expect((await client.workflow.getHandle(researcher.workflowId).describe()).parentExecution?.workflowId).toBe(
      lead.workflowId,
    );
  });

  it('the depth cap: a run at the deepest level is offered no invoke_skill, and a call anyway is refused', async () => {
    fake.enqueue(
      reply(invoke('lead', 'Research.', { params: { topic: 'x' } })),
      reply(invoke('researcher', 'Find.', { params: { question: 'q' } })),
      reply(invoke('checker', 'Check it.', { params: { claim: 'c' } })),
      reply(json({ facts: [], confidence: 0 })),
      reply(json({ summary: 'Nothing.' })),
      reply(text('Done.')),
    );
    const { result } = await runTurn(client, taskQueue, 'deep research', { settings: { maxSkillDepth: 2 } });
    expect(result).toMatchObject({ status: 'completed' });
    expect(systemOf(fake.requests[2].body)[1]).toContain(
      'Skills nest no deeper than this: this run invokes no other skills.',
    );
    expect(toolNames(fake.requests[2].body)).toEqual(['load_subskill', 'read_file', 'request_human_approval']);
    expect(resultsIn(fake.requests[3].body)).toEqual([
      [
        'Skill runs nest at most 2 deep (SKILLFLOW_MAX_SKILL_DEPTH); invoking checker here would run it at depth 3.',
        true,
      ],
    ]);
    expect(result.skills!.map((r) => [r.skill, r.depth, r.status])).toEqual([
      ['lead', 1, 'completed'],
      ['researcher', 2, 'completed'],
    ]);
  });

  it("a skill run gets the registered tools its skill grants (the tools issue's scope), for its whole run", async () => {
    fake.enqueue(
      reply(invoke('looper', 'What is 6 * 7?'), invoke('sleeper', 'Nothing to compute.')),
      reply(toolUse('calculator', { expression: '6 * 7' })),
      reply(text('42')),
      reply(toolUse('calculator', { expression: '1 + 1' })),
      reply(text('I may not compute.')),
      reply(text('6 * 7 is 42.')),
    );
    const { result, events } = await runTurn(client, taskQueue, 'compute');
    expect(toolNames(fake.requests[1].body)).toEqual([
      'load_subskill',
      'read_file',
      'request_human_approval',
      'calculator',
    ]);
    expect(resultsIn(fake.requests[2].body)).toEqual([['6 * 7 = 42', false]]);
    expect(toolNames(fake.requests[3].body)).toEqual(['load_subskill', 'read_file', 'request_human_approval']);
    expect(resultsIn(fake.requests[4].body)[0][1]).toBe(true);
    expect(events.find((e) => e.type === 'tool.start' && e.name === 'calculator')).toMatchObject({
      depth: 1,
      source: 'builtin',
    });
    expect(result.skills!.map((r) => [r.skill, r.output])).toEqual([
      ['looper', '42'],
      ['sleeper', 'I may not compute.'],
    ]);
  });

  it('a skill run may invoke only its children: a call outside them is refused and counts as a plan violation', async () => {
    fake.enqueue(
      reply(invoke('lead', 'Research.', { params: { topic: 'x' } })),
      reply(invoke('simple-writing', 'Write it up.', { params: { topic: 'x' } })),
      reply(invoke('simple-writing', 'Write it up, please.', { params: { topic: 'x' } })),
      reply(text('The lead could not finish.')),
    );
    const { result } = await runTurn(client, taskQueue, 'research', { settings: { maxPlanViolations: 2 } });
    expect(resultsIn(fake.requests[2].body)).toEqual([
      ['Skill lead may invoke only its children (researcher); simple-writing is not one of them.', true],
    ]);
    // The second violation ends the skill run; the parent gets an error result and goes on.
    const [[content, isError]] = resultsIn(fake.requests[3].body);
    expect(isError).toBe(true);
    expect(JSON.parse(content)).toEqual({
      skill_id: 'lead',
      output: null,
      success: false,
      error: 'The model broke the rules of skill run lead 2 times; the skill run was stopped. Remaining: none.',
    });
    expect(result).toMatchObject({
      status: 'completed',
      output: 'The lead could not finish.',
      skills: [{ skill: 'lead', status: 'failed', error: { code: 'plan_violations' } }],
    });
  });

  it("a child's output must match its schema: one corrective round, then an error result; the parent goes on", async () => {
    fake.enqueue(
      reply(invoke('researcher', 'Find facts.', { params: { question: 'q' } })),
      reply(text('I found that the delta is large.')),
      reply(json({ facts: ['large'], confidence: 0.5 })),
      reply(invoke('researcher', 'Find more.', { params: { question: 'q' } })),
      reply(json({ facts: 'large' })),
      reply(text('```json\n{"facts": [1], "confidence": 2}\n```')),
      reply(text('One run worked, one did not.')),
    );
    const { result } = await runTurn(client, taskQueue, 'facts');
    // The correction names every problem and the schema.
    expect(textsIn(fake.requests[2].body).at(-1)).toMatch(
      /^Your final answer is the output of skill researcher and it does not match its Output schema: the answer is not a JSON object\. Answer again with one JSON object matching this schema, and nothing else: \{"type":"object"/,
    );
    expect(JSON.parse(resultsIn(fake.requests[3].body)[0][0])).toEqual({
      skill_id: 'researcher',
      output: { facts: ['large'], confidence: 0.5 },
      success: true,
    });
    expect(textsIn(fake.requests[5].body).at(-1)).toContain(
      'does not match its Output schema: output.facts is a string, not an array; output.confidence is required.',
    );
    const [[failed, isError]] = resultsIn(fake.requests[6].body);
    expect(isError).toBe(true);
    expect(JSON.parse(failed)).toEqual({
      skill_id: 'researcher',
      output: null,
      success: false,
      error:
        'Skill researcher declares a structured output, and its final answer was still not valid output (output.facts[0] is a number, not a string; output.confidence is 2, above the maximum 1) after one correction; the skill run was stopped.',
    });
    expect(result).toMatchObject({ status: 'completed', output: 'One run worked, one did not.' });
    expect(result.skills!.map((r) => [r.status, r.error?.code ?? null])).toEqual([
      ['completed', null],
      ['failed', 'invalid_output'],
    ]);
  });

  it("a child's last word after its round budget is its output when valid, else the run fails (invalid_output)", async () => {
    const lookup = () => toolUse('read_file', { path: 'nothing.md' });
    fake.enqueue(
      reply(invoke('researcher', 'Find facts.', { params: { question: 'q' } })),
      reply(lookup()),
      reply(lookup()),
      reply(lookup()),
      reply(json({ facts: ['large'], confidence: 0.5 })),
      reply(invoke('researcher', 'Find more.', { params: { question: 'q' } })),
      reply(lookup()),
      reply(lookup()),
      reply(lookup()),
      reply(text('I could not find anything.')),
      reply(text('One run gave facts, one did not.')),
    );
    const { result } = await runTurn(client, taskQueue, 'facts', { settings: { maxRounds: 3 } });
    expect(JSON.parse(resultsIn(fake.requests[5].body)[0][0])).toEqual({
      skill_id: 'researcher',
      output: { facts: ['large'], confidence: 0.5 },
      success: true,
    });
    const [[failed, isError]] = resultsIn(fake.requests[10].body);
    expect(isError).toBe(true);
    expect(JSON.parse(failed)).toEqual({
      skill_id: 'researcher',
      output: null,
      success: false,
      error: 'Skill researcher declares a structured output, and its run ended (max_rounds) without a valid one.',
    });
    expect(result).toMatchObject({ status: 'completed', output: 'One run gave facts, one did not.' });
    expect(result.skills!.map((r) => [r.status, r.error?.code ?? null])).toEqual([
      ['completed', null],
      ['failed', 'invalid_output'],
    ]);
    expect(result.artifacts).toEqual([
      expect.objectContaining({ name: 'researcher', data: { facts: ['large'], confidence: 0.5 }, depth: 1 }),
    ]);
  });

  it('limits bound a child: max-iterations and timeout end it with a clear error result, and the parent goes on', async () => {
    const lookup = () => toolUse('read_file', { path: 'nothing.md' });
    fake.enqueue(
      reply(invoke('looper', 'Loop.'), invoke('sleeper', 'Sleep.')),
      reply(lookup()),
      reply(lookup()),
      { content: [text('Thinking slowly about it.'), lookup()], delayMs: 400 },
      reply(text('Both skills stopped.')),
    );
    const { result, events } = await runTurn(client, taskQueue, 'limits');
    const [[looper, loopErr], [sleeper, sleepErr]] = resultsIn(fake.requests[4].body);
    expect([loopErr, sleepErr]).toEqual([true, true]);
    expect(JSON.parse(looper).error).toBe(
      'Skill looper reached its limit of 2 model rounds (limits.max-iterations: 2); the skill run was stopped.',
    );
    expect(JSON.parse(sleeper).error).toBe(
      'Skill sleeper reached its limit of 1s of active time (limits.timeout: 1s; time waiting for a human does not count); the skill run was stopped.',
    );
    expect(result).toMatchObject({ status: 'completed', output: 'Both skills stopped.' });
    expect(result.skills!.map((r) => [r.skill, r.status, r.error?.code])).toEqual([
      ['looper', 'failed', 'skill_limit'],
      ['sleeper', 'failed', 'skill_limit'],
    ]);
    expect(
      events
        .filter((e) => e.type === 'tool.end' && e.isSkill)
        .map((e) => (e.type === 'tool.end' ? [e.name, e.isError] : [])),
    ).toEqual([
      ['looper', true],
      ['sleeper', true],
    ]);
  });

  it("a checkpoint inside a child: the turn waits with it (the inbox finds it), it is answered through the turn's API and stream, numbering goes on", async () => {
    const script = [
      reply(invoke('checker', 'Have this confirmed: the delta is 5,800 km².', { params: { claim: '5,800 km²' } })),
      reply(
        text('Asking the human.'),
        toolUse('request_human_approval', {
          checkpoint: 'confirm',
          summary: 'Is the delta 5,800 km²?',
          kind: 'approval',
          params: { claim: 'about 5,800 km²' },
        }),
      ),
      reply(text('Confirmed by a human.')),
      reply(
        text('One more question for you.'),
        toolUse('request_human_approval', { checkpoint: 'anything_else', summary: 'Anything else?', kind: 'question' }),
      ),
      reply(text('Thanks, all done.')),
    ];
    // Live deltas reach a stream once it has caught up with the turn's log: until a read of the log succeeds, the
    // stream holds them, and drops them if the turn ends first (this worker pushes no log events, so only reads bring
    // them). Fresh-clone npm tests at ae89842 and 913bb0c got every durable event and no delta of the child at all,
    // which is what a stream gets when its reads fail until the turn has ended (reproduced by failing them). The
    // turn's first model call waits until the stream has its first durable event, from the read that catches it up.
    let caughtUp!: () => void;
    const streamCaughtUp = new Promise<void>((resolve) => (caughtUp = resolve));
    fake.respond(async () => {
      if (script.length === 5) await streamCaughtUp;
      return script.shift()!;
    });
    const turnId = await api.startTurn('Check the delta size.');
    const stream = await SseClient.open(`${base}/v1/turns/${turnId}/events`, authHeaders());
    try {
      await stream.waitFor((e) => e.offset !== undefined);
    } finally {
      caughtUp();
    }
    const pending = await api.pending(turnId);
    // The parameters the caller gave are what the child's checkpoint proposes.
    expect(pending).toMatchObject({
      id: 'cp-1',
      name: 'confirm',
      kind: 'approval',
      skill: 'checker',
      depth: 1,
      params: { claim: '5,800 km²' },
      actions: ['approve', 'modify', 'cancel'],
    });
    expect((await api.turn(turnId)).body).toMatchObject({
      status: 'waiting',
      skills: [{ skill: 'checker', status: 'waiting', depth: 1 }],
    });

    // The inbox: the API's waiting turns, and the operators' visibility query on the turn's search attributes.
    const inbox = await eventually(
      async () =>
        (await app.inject({ method: 'GET', url: '/v1/turns?status=waiting', headers: authHeaders(operatorKey) })).json()
          .turns as Json[],
      (turns) => turns.some((turn) => turn.id === turnId),
    );
    expect(inbox.find((turn) => turn.id === turnId)).toMatchObject({ status: 'waiting', checkpoint: 'confirm' });
    const waiting = await eventually(
      async () => {
        const ids = [];
        for await (const e of client.workflow.list({
          query: `WorkflowType = '${workflowTypes.turn}' AND ExecutionStatus = 'Running' AND SkillflowStatus = 'waiting' AND SkillflowCheckpoint = 'confirm'`,
        }))
          ids.push(e.workflowId);
        return ids;
      },
      (ids) => ids.includes(turnId),
    );
    expect(waiting).toContain(turnId);

    // Answered through the turn: a wrong action is refused with the reason, the right one reaches the child once.
    expect(await api.answer(turnId, 'cp-1', { action: 'answer', answer: 'yes' })).toMatchObject({
      code: 400,
      body: { error: { code: 'invalid_decision' } },
    });
    expect(await api.answer(turnId, 'cp-1', { action: 'modify', overrides: { claim: 5800 } })).toMatchObject({
      code: 400,
      body: { error: { code: 'invalid_decision', details: [{ path: 'overrides.claim', rule: 'type' }] } },
    });
    expect(await api.answer(turnId, 'cp-1', { action: 'approve' })).toMatchObject({
      code: 200,
      body: { checkpointId: 'cp-1', action: 'approve' },
    });
    expect(await api.answer(turnId, 'cp-1', { action: 'approve' })).toMatchObject({
      code: 409,
      body: { error: { code: 'checkpoint_not_pending' } },
    });
    const second = await api.pending(turnId, 'cp-1');
    expect(second).toMatchObject({ id: 'cp-2', name: 'anything_else', depth: 0, skill: null });
    expect(resultsIn(fake.requests[2].body)).toEqual([['{"approved":true}', false]]);
    expect(await api.answer(turnId, 'cp-2', { action: 'answer', answer: 'No.' })).toMatchObject({ code: 200 });
    expect(await api.finished(turnId)).toMatchObject({
      status: 'completed',
      output: 'Thanks, all done.',
      skills: [{ skill: 'checker', status: 'completed', output: 'Confirmed by a human.' }],
    });

    // The stream carried the child's events with their depth, in the turn's order of offsets.
    await stream.ended;
    const streamed = stream.events.filter((e) => e.offset !== undefined);
    expect(streamed.filter((e) => e.depth === 1).map((e) => [e.type, e.name ?? null])).toEqual([
      ['tool.start', 'checker'],
      ['message', null],
      ['tool.start', 'request_human_approval'],
      ['checkpoint.requested', null],
      ['checkpoint.resolved', null],
      ['tool.end', 'request_human_approval'],
      ['message', null],
      ['tool.end', 'checker'],
    ]);
    expect(streamed.find((e) => e.type === 'checkpoint.requested' && e.depth === 1)).toMatchObject({
      checkpoint: { id: 'cp-1', skill: 'checker', depth: 1 },
    });
    expect(streamed.map((e) => e.offset)).toEqual(streamed.map((_, i) => i + 1));
    // Resumable like any event: Last-Event-ID in the middle of the child's events gives exactly the rest.
    const resumeAt = streamed.find((e) => e.type === 'checkpoint.requested')!.offset;
    const resumed = await SseClient.open(`${base}/v1/turns/${turnId}/events`, {
      ...authHeaders(),
      'last-event-id': String(resumeAt),
    });
    await resumed.ended;
    expect(resumed.events.filter((e) => e.offset !== undefined)).toEqual(streamed.filter((e) => e.offset > resumeAt));
    // The child's text streamed live on the turn's stream too, marked with its depth.
    expect(
      stream.events
        .filter((e) => e.type === 'message.delta' && e.depth === 1)
        .map((e) => e.text)
        .join(''),
    ).toContain('Asking the human.');
    expect(script).toEqual([]);
  });

  it("operators answer a child's checkpoint with the checkpointDecision signal to the turn; cancelling it ends the child with an error result and the turn goes on", async () => {
    fake.enqueue(
      reply(invoke('checker', 'Confirm the claim.', { params: { claim: 'x' } })),
      reply(
        toolUse('request_human_approval', {
          checkpoint: 'confirm',
          summary: 'Confirm x?',
          kind: 'approval',
          params: { claim: 'x' },
        }),
      ),
      reply(text('The human cancelled the check.')),
      reply(text('The check was cancelled; I will not rely on x.')),
    );
    const handle = await startTurn(client, taskQueue, 'check x');
    const pending = await eventually(
      () => handle.query(turnStateQuery),
      (state) => state.pendingCheckpoint !== null,
    );
    expect(pending).toMatchObject({ status: 'waiting', pendingCheckpoint: { id: 'cp-1', skill: 'checker', depth: 1 } });
    const described = await handle.describe();
    expect(described.searchAttributes).toMatchObject({
      SkillflowStatus: ['waiting'],
      SkillflowCheckpoint: ['confirm'],
    });
    // The UI's current details: the turn's name the checkpoint and the skill run that asked; the run's send operators to the turn.
    const childId = pending.skills![0].workflowId;
    const details = await currentDetails(handle);
    expect(details.split('\n')[0]).toBe(
      `**Waiting for a human** at checkpoint **confirm** (\`cp-1\`, approval), asked by skill \`checker\` in skill run \`${childId}\` (depth 1).`,
    );
    expect(details).toContain('- Parameters: `{"claim":"x"}`\n');
    const childDetails = await currentDetails(client.workflow.getHandle(childId));
    expect(childDetails).toContain(
      `Answer it through its turn \`${handle.workflowId}\` with the update \`answerCheckpoint\``,
    );
    const pasted = pastedAnswers(details);
    expect(pastedAnswers(childDetails)).toEqual(pasted);
    // An invalid signal is ignored; a valid one (the details' cancel, with a name in `by`) is passed down.
    await handle.signal(checkpointDecisionSignal, { checkpointId: 'cp-1', action: 'choose', choice: 'x', by: 'ops' });
    await handle.signal(checkpointDecisionSignal, { ...pasted.cancel, by: 'ops-alice' } as never);
    const result = await handle.result();
    const [[content, isError]] = resultsIn(fake.requests[3].body);
    expect(isError).toBe(true);
    expect(JSON.parse(content)).toEqual({
      skill_id: 'checker',
      output: null,
      success: false,
      error:
        'Skill checker did not finish: it was cancelled (cancelled_by_user). Its last words: The human cancelled the check.',
    });
    expect(result).toMatchObject({
      status: 'completed',
      output: 'The check was cancelled; I will not rely on x.',
      skills: [{ skill: 'checker', status: 'cancelled' }],
    });
    const events = await eventsOf(handle);
    expect(events.find((e) => e.type === 'checkpoint.resolved')).toMatchObject({
      checkpointId: 'cp-1',
      action: 'cancel',
      by: 'ops-alice',
      depth: 1,
    });
    expect((await handle.describe()).searchAttributes).toMatchObject({ SkillflowStatus: ['completed'] });
    expect(await currentDetails(handle)).toBe('');
    expect(await currentDetails(client.workflow.getHandle(childId))).toBe('');
  });

  it('cancelling the turn cancels its skill runs', async () => {
    fake.enqueue(
      reply(invoke('checker', 'Confirm.', { params: { claim: 'y' } })),
      reply(toolUse('request_human_approval', { checkpoint: 'confirm', summary: 'Confirm y?', kind: 'approval' })),
    );
    const turnId = await api.startTurn('check y');
    await api.pending(turnId);
    const childId = (await api.turn(turnId)).body.skills[0].workflowId as string;
    expect(
      (await app.inject({ method: 'POST', url: `/v1/turns/${turnId}/cancel`, headers: authHeaders() })).statusCode,
    ).toBe(202);
    expect(await api.finished(turnId)).toMatchObject({
      status: 'cancelled',
      skills: [{ workflowId: childId, status: 'cancelled' }],
    });
    const child = client.workflow.getHandle(childId) as WorkflowHandle<() => Promise<SkillRunResult>>;
    expect(await child.result()).toMatchObject({ status: 'cancelled', success: false });
    expect((await child.describe()).searchAttributes).toMatchObject({ SkillflowStatus: ['cancelled'] });
  });

  it('a skill run cancelled or terminated by hand ends alone: its caller gets an error result and goes on', async () => {
    const ask = () =>
      reply(toolUse('request_human_approval', { checkpoint: 'confirm', summary: 'Confirm?', kind: 'approval' }));
    fake.enqueue(
      reply(invoke('checker', 'Confirm.', { params: { claim: 'z' } })),
      ask(),
      reply(invoke('checker', 'Confirm again.', { params: { claim: 'z' } })),
      ask(),
      reply(text('Both checks were stopped.')),
    );
    const handle = await startTurn(client, taskQueue, 'check z twice');
    const waitingRun = async (index: number) => {
      const state = await eventually(
        () => handle.query(turnStateQuery),
        (s) => s.status === 'waiting' && s.skills?.[index]?.status === 'waiting',
      );
      return state.skills![index].workflowId;
    };
    await client.workflow.getHandle(await waitingRun(0)).terminate('by hand');
    // The turn no longer shows the ended run's checkpoint as its own.
    await eventually(
      () => handle.query(turnStateQuery),
      (s) => s.skills?.[0]?.status === 'failed',
    );
    expect(await handle.query(turnStateQuery)).toMatchObject({ pendingCheckpoint: null });
    await client.workflow.getHandle(await waitingRun(1)).cancel();
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', output: 'Both checks were stopped.' });
    expect(result.skills!.map((r) => [r.status, r.error?.code])).toEqual([
      ['failed', 'terminated'],
      ['cancelled', 'cancelled'],
    ]);
    const [[terminated, isError]] = resultsIn(fake.requests[2].body);
    expect(isError).toBe(true);
    expect(JSON.parse(terminated).error).toBe('The skill run of checker was terminated in Temporal.');
    expect(JSON.parse(resultsIn(fake.requests[4].body)[0][0]).error).toBe(
      'Skill checker did not finish: it was cancelled (cancelled).',
    );
  });

  it("typed invocation from the API: params are validated before the turn starts, and the skill's checkpoint proposes them", async () => {
    const sessionId = await api.createSession();
    const bad = await api.sendMessage(sessionId, {
      message: 'An exam, please.',
      skill: 'exam-mode-tuner',
      params: { concepts: 'graphs', level: 3 },
    });
    expect(bad.code).toBe(400);
    expect(bad.body.error).toMatchObject({
      code: 'invalid_params',
      message:
        'The params are not valid for skill exam-mode-tuner: params.concepts is a string, not an array; params.level is not allowed here; the allowed names are topic, concepts; params.topic is required.',
      details: [
        { path: 'params.concepts', rule: 'type', allowed: 'array' },
        { path: 'params.level', rule: 'additionalProperties' },
        { path: 'params.topic', rule: 'required' },
      ],
    });
    expect(bad.body.error.expectedParameters.map((p: Json) => p.name)).toEqual(['topic', 'concepts']);
    expect((await api.sendMessage(sessionId, { message: 'x', params: { topic: 'graphs' } })).body.error).toMatchObject({
      code: 'invalid_request',
      message: 'params go with a skill: name the skill they are for.',
    });

    fake.enqueue(
      reply(
        toolUse('request_human_approval', {
          checkpoint: 'exam_params',
          summary: 'An exam on trees?',
          kind: 'approval',
          params: { question_count: 5, concepts: ['trees'] },
        }),
      ),
    );
    const started = await api.sendMessage(sessionId, {
      message: 'An exam, please.',
      skill: 'exam-mode-tuner',
      params: { topic: 'graphs', concepts: ['bfs', 'dfs'] },
    });
    expect(started.code).toBe(202);
    const params = await api.pending(started.body.id);
    expect(params).toMatchObject({
      name: 'exam_params',
      skill: 'exam-mode-tuner',
      params: { question_count: 5, concepts: ['bfs', 'dfs'], difficulty: 'adaptive', time_limit_min: 35 },
    });
    expect(textsIn(fake.requests[0].body).join('\n')).toContain(
      'The user gave these parameters for it: {"topic":"graphs","concepts":["bfs","dfs"]}.',
    );
    fake.enqueue(reply(text('Maybe another time.')));
    await api.answer(started.body.id, params.id, { action: 'cancel' });
    expect(await api.finished(started.body.id)).toMatchObject({ status: 'cancelled' });
  });

  describe("the exam's report is structured output", () => {
    const exam = 'exam-mode-tuner';
    const subskill = (name: string) => toolUse('load_subskill', { skill: exam, subskill: name });
    const ask = (checkpoint: string, kind: string, extra: Record<string, unknown> = {}) =>
      toolUse('request_human_approval', { checkpoint, summary: checkpoint, kind, ...extra });
    const untilAnalytics = () => [
      reply(toolUse('load_skill', { name: exam })),
      reply(
        ask('exam_params', 'approval', { params: { question_count: 1, time_limit_min: 35, concepts: ['arrays'] } }),
      ),
      reply(subskill('question-generation')),
      reply(subskill('adaptive-difficulty')),
      reply(subskill('performance-analytics')),
    ];
    const submit = (output: unknown) => reply(toolUse('submit_output', { output }));
    const routeAndStop = () => reply(text('You scored 100%.'), ask('post_exam_routing', 'approval'));
    async function runExam(turnId: string): Promise<Json> {
      const params = await api.pending(turnId);
      await api.answer(turnId, params.id, { action: 'approve' });
      const route = await api.pending(turnId, params.id);
      await api.answer(turnId, route.id, { action: 'choose', choice: 'Stop here' });
      return api.finished(turnId);
    }

    it('handed in with submit_output: an artifact event, and artifacts in GET /v1/turns/:id', async () => {
      fake.enqueue(...untilAnalytics(), submit(examOutput(1, 100)), routeAndStop(), reply(text('Well done.')));
      const turnId = await api.startTurn('An exam on arrays.');
      const params = await api.pending(turnId);
      await api.answer(turnId, params.id, { action: 'approve' });
      await api.pending(turnId, params.id);
      const report = { name: exam, mimeType: 'application/json', data: examOutput(1, 100), depth: 0 };
      expect((await api.turn(turnId)).body.artifacts).toEqual([expect.objectContaining(report)]);
      const route = (await api.turn(turnId)).body.pendingCheckpoint;
      await api.answer(turnId, route.id, { action: 'choose', choice: 'Stop here' });
      expect(await api.finished(turnId)).toMatchObject({
        status: 'completed',
        output: 'Well done.',
        artifacts: [report],
      });
      expect(resultsIn(fake.requests[6].body)).toEqual([['{"accepted":true,"skill":"exam-mode-tuner"}', false]]);
      const log = await client.workflow.getHandle(turnId).query(turnEventsQuery, 0);
      const [artifact] = log.filter((e) => e.type === 'artifact');
      expect(artifact).toMatchObject({
        type: 'artifact',
        name: exam,
        mimeType: 'application/json',
        data: examOutput(1, 100),
      });
      expect(artifact).not.toHaveProperty('depth');
    });

    it('an invalid report gets one correction', async () => {
      fake.enqueue(
        ...untilAnalytics(),
        submit({ ...examOutput(1), score_percent: 120, recommendation: 'nap' }),
        submit(examOutput(1, 80)),
        routeAndStop(),
        reply(text('Well done.')),
      );
      const done = await runExam(await api.startTurn('An exam on arrays.'));
      expect(done).toMatchObject({ status: 'completed', artifacts: [{ data: { score_percent: 80 } }] });
      const [[refused, isError]] = resultsIn(fake.requests[6].body);
      expect(isError).toBe(true);
      expect(refused).toMatch(
        /^The output of skill exam-mode-tuner was not accepted: output\.score_percent is 120, above the maximum 100; output\.recommendation is "nap", not one of "memory-comprehension-coach", "study-guide-creator", "exam-mode-tuner"\. Call submit_output again/,
      );
    });

    it("a plan's final answer without the report is corrected once, then the turn fails with invalid_output", async () => {
      fake.enqueue(...untilAnalytics(), routeAndStop(), reply(text('Well done.')), reply(text('Well done, really.')));
      const done = await runExam(await api.startTurn('An exam on arrays.'));
      expect(textsIn(fake.requests[7].body).at(-1)).toMatch(
        /^Skill exam-mode-tuner declares a structured output and it has not been handed in\. Call submit_output/,
      );
      expect(done).toMatchObject({
        status: 'failed',
        reason: 'invalid_output',
        artifacts: [],
        error: {
          code: 'invalid_output',
          message:
            'Skill exam-mode-tuner declares a structured output, and it was never handed in with submit_output after one correction; the turn was stopped.',
        },
      });
    });
  });
});
