import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { buildToolRegistry, type BuiltRegistry } from '../lib/tools/build';
import { payloadsIn } from './support/codec';
import { text, toolUse, type FakeAnthropic, type MessagesRequestBody } from './support/fake-anthropic';
import { useWorkerHarness } from './support/harness';
import { patchesIn } from './support/handover';
import { manyToolMark, manyToolsServer } from './support/many-tools';
import type { TemporalTestEnv } from './support/temporal';
import { resultOf, startTurn } from './support/turns';

/**
 * Issue 24.3 on the dev server: a worker with two MCP servers of 80 tools each. `huge`, each tool within the per-tool
 * caps, would make a 2.55 MiB catalog and is refused by the catalog's bound; `wide` (1.3 MiB, the bound raised to
 * 1.5 MiB) is registered. A turn starts and invokes a skill that grants two of wide's tools: the turn's and the skill
 * run's histories hold the tools' headers and the detail of the granted ones only, never the catalog, and the model is
 * offered only the tools granted. Before, the whole catalog crossed history in readTurnStart's result and in every
 * skill run's input, so no turn could start with `huge` (past Temporal's 2 MiB payload limit).
 */
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-catalog-history-'));
const skillsDir = path.join(dir, 'skills');
fs.mkdirSync(path.join(skillsDir, 'wide-user'), { recursive: true });
fs.writeFileSync(
  path.join(skillsDir, 'wide-user', 'SKILL.md'),
  '---\nname: wide-user\ndescription: Echoes text with two of the wide tools, for tests.\nallowed-tools: "wide__tool_03 wide__tool_41"\n---\n\n# wide-user\n\nEcho the task.\n',
);
const granted = { root: [5], skill: [3, 41] };
const lines: string[] = [];
let built: BuiltRegistry;

beforeAll(async () => {
  const file = path.join(dir, 'mcp.json');
  fs.writeFileSync(
    file,
    JSON.stringify({ servers: { huge: manyToolsServer(80, 4096, 29_000), wide: manyToolsServer(80, 2000, 14_000) } }),
  );
  built = await buildToolRegistry(
    {
      defaultTools: ['wide__tool_05'],
      toolsDir: path.join(dir, 'no-tools'),
      mcpConfigPath: file,
      httpFetchHosts: [],
      httpFetchMaxBytes: 1024,
      httpFetchTimeoutMs: 1000,
      toolCatalogMaxBytes: 1536 * 1024,
    },
    (line) => lines.push(line),
  );
}, 60_000);
afterAll(async () => {
  await built?.close();
});

const registeredNames = (body: MessagesRequestBody) =>
  (body.tools as Array<{ name: string }>).map((tool) => tool.name).filter((name) => name.includes('__'));
const toolResults = (body: MessagesRequestBody) =>
  (body.messages.at(-1) as { content: Array<{ type: string; content?: string; is_error?: boolean }> }).content.filter(
    (block) => block.type === 'tool_result',
  );

/** Every payload of a workflow's history, as text. */
async function payloadsOf(client: Client, workflowId: string): Promise<string[]> {
  const { events } = await client.workflow.getHandle(workflowId).fetchHistory();
  return payloadsIn(events).map((payload) => Buffer.from(payload.data ?? []).toString('utf8'));
}

describe('the tool catalog stays out of workflow history', () => {
  const harness = useWorkerHarness('catalog', {
    skillsDir: () => skillsDir,
    deps: () => ({ registry: built.registry }),
  });
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let taskQueue: string;
  beforeAll(() => ({ env, fake, taskQueue } = harness));

  it('a turn and a skill run start with 80-tool MCP servers configured; history holds the granted detail only, and the model gets only the granted tools', async () => {
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^MCP server huge: 80 tools of 2\.5\d MiB .* over its bound of 1\.50 MiB \(SKILLFLOW_TOOL_CATALOG_MAX_BYTES\); none of them is registered\./,
      ),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^MCP server wide: 80 tools \(wide__tool_00, .*, wide__tool_79\); the tool catalog now 1\.\d\d MiB of 1\.50 MiB$/,
      ),
    );
    expect(built.registry.specs.filter((spec) => spec.server === 'huge')).toEqual([]);
    expect(built.registry.specs.filter((spec) => spec.server === 'wide')).toHaveLength(80);
    expect(built.registry.catalogBytes).toBeGreaterThan(1024 * 1024);
    expect(built.registry.catalogBytes).toBe(
      built.registry.specs.reduce((sum, spec) => sum + Buffer.byteLength(JSON.stringify(spec)), 0),
    );

    fake.enqueue(
      { content: [toolUse('invoke_skill', { skill: 'wide-user', task: 'Echo hi.' })] },
      { content: [toolUse('wide__tool_03', { text: 'hi' })] },
      { content: [text('Echoed hi.')] },
      { content: [text('Done.')] },
    );
    const handle = await startTurn(env.client, taskQueue, 'echo hi with the skill');
    const result = await resultOf(handle);
    expect(result).toMatchObject({ status: 'completed', output: 'Done.' });
    const [turnRound, skillRound, skillAnswer, turnAnswer] = fake.requests.map((request) => request.body);
    expect(registeredNames(turnRound)).toEqual(['wide__tool_05']);
    expect(registeredNames(skillRound)).toEqual(['wide__tool_03', 'wide__tool_41']);
    expect(toolResults(skillAnswer)).toEqual([expect.objectContaining({ content: 'echo tool_03: hi' })]);
    expect(registeredNames(turnAnswer)).toEqual(['wide__tool_05']);

    const skillRun = result.skills?.find((record) => record.skill === 'wide-user');
    expect(skillRun).toMatchObject({ status: 'completed', output: 'Echoed hi.' });
    expect(await patchesIn(handle)).toEqual([]);
    const histories = {
      turn: await payloadsOf(env.client, handle.workflowId),
      skill: await payloadsOf(env.client, skillRun!.workflowId),
    };
    for (const [run, payloads] of Object.entries(histories)) {
      const mine = run === 'turn' ? granted.root : granted.skill;
      for (let index = 0; index < 80; index++) {
        const holding = payloads.filter((payload) => payload.includes(manyToolMark(index))).length;
        // A granted tool's detail crosses history when the run reads it (and in the model call that first offers it).
        if (mine.includes(index)) expect({ run, index, holding: holding > 0 }).toEqual({ run, index, holding: true });
        else expect({ run, index, holding }).toEqual({ run, index, holding: 0 });
      }
      const largest = Math.max(...payloads.map((payload) => Buffer.byteLength(payload)));
      expect({ run, largest: largest < 128 * 1024 }).toEqual({ run, largest: true });
    }
  });
});
