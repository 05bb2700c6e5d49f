import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { idempotencyKeyOf } from '../core/tools';
import { buildToolRegistry, type BuiltRegistry } from '../lib/tools/build';
import { startMcpHttpServer } from './support/mcp-http-server';
import { text, toolUse, type FakeAnthropic, type MessagesRequestBody } from './support/fake-anthropic';
import { useWorkerHarness } from './support/harness';
import type { TemporalTestEnv } from './support/temporal';
import { eventsOf, runTurn, startTurn } from './support/turns';

/**
 * Tools of MCP servers, end to end on the dev server: the test server (test/support/mcp-test-server.ts) on stdio and
 * on streamable HTTP, listed in an MCP config file, discovered when the registry is built, namespaced by server,
 * scoped, called in turns; a call that outlives the server's timeout, and a server that is down, give error results
 * and the turn goes on.
 */
const repoRoot = path.resolve(__dirname, '..');
const serverScript = path.join(repoRoot, 'test', 'support', 'mcp-test-server.ts');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-mcp-'));

let httpServer: ChildProcess;
let built: BuiltRegistry;
const lines: string[] = [];

beforeAll(async () => {
  const started = await startMcpHttpServer();
  httpServer = started.child;
  const config = {
    servers: {
      local: {
        transport: 'stdio',
        command: process.execPath,
        args: ['--import', 'tsx', serverScript, 'stdio'],
        cwd: repoRoot,
        timeout: '1s',
      },
      remote: { transport: 'http', url: `http://127.0.0.1:${started.port}/mcp`, timeout: '20s', category: 'search' },
    },
  };
  const file = path.join(dir, 'mcp.json');
  fs.writeFileSync(file, JSON.stringify(config));
  built = await buildToolRegistry(
    {
      defaultTools: ['mcp:local', 'category:search'],
      toolsDir: path.join(dir, 'no-tools'),
      mcpConfigPath: file,
      httpFetchHosts: [],
      httpFetchMaxBytes: 1024,
      httpFetchTimeoutMs: 1000,
    },
    (line) => lines.push(line),
  );
}, 60_000);
afterAll(async () => {
  await built?.close();
  httpServer?.kill();
});

const resultsOf = (body: MessagesRequestBody) =>
  (body.messages.at(-1) as { content: Array<{ type: string; content?: string; is_error?: boolean }> }).content.filter(
    (block) => block.type === 'tool_result',
  );

describe('tools from MCP servers', () => {
  const harness = useWorkerHarness('mcp', { deps: () => ({ registry: built.registry }) });
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let taskQueue: string;
  beforeAll(() => ({ env, fake, taskQueue } = harness));

  it('are discovered at start-up, namespaced by server within the tool name rule, with approval from their annotations', () => {
    const specs = built.registry.specs.filter((spec) => spec.source === 'mcp');
    const names = specs.map((spec) => spec.name);
    expect(names).toHaveLength(10);
    expect(names).toEqual(
      expect.arrayContaining([
        'local__echo',
        'local__slow',
        'local__record',
        'local__fail',
        'remote__echo',
        'remote__slow',
        'remote__record',
        'remote__fail',
      ]),
    );
    expect(names.filter((name) => /^(local|remote)__dotted_name_[0-9a-f]{8}$/.test(name))).toHaveLength(2);
    for (const spec of specs) expect(spec.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(specs.find((spec) => spec.name === 'remote__echo')).toMatchObject({
      server: 'remote',
      category: 'search',
      idempotent: true,
      needsApproval: false,
    });
    expect(specs.find((spec) => spec.name === 'local__record')).toMatchObject({
      category: 'mcp',
      idempotent: false,
      needsApproval: false,
    });
    expect(specs.find((spec) => spec.name === 'local__echo')?.inputSchema).toMatchObject({
      type: 'object',
      properties: { text: { type: 'string', maxLength: 100 } },
      required: ['text'],
    });
    expect(lines.join('\n')).toContain('MCP server remote: 5 tools');
  });

  it('an MCP tool on stdio and one on HTTP, used in a turn; events name the server', async () => {
    fake.enqueue(
      {
        content: [
          toolUse('local__echo', { text: 'over stdio' }),
          toolUse('remote__echo', { text: 'over http' }),
          toolUse('local__record', { entry: 'e1' }, 'toolu_rec'),
        ],
      },
      { content: [toolUse('remote__fail', {}), toolUse('local__echo', { text: 'x'.repeat(101) })] },
      { content: [text('Echoed.')] },
    );
    const handle = await startTurn(env.client, taskQueue, 'echo');
    expect(await handle.result()).toMatchObject({ status: 'completed', output: 'Echoed.' });
    const tools = (fake.requests[0].body.tools as Array<{ name: string }>).map((tool) => tool.name);
    expect(tools).toEqual(expect.arrayContaining(['local__echo', 'local__slow', 'remote__echo', 'remote__slow']));
    expect(resultsOf(fake.requests[1].body)).toEqual([
      expect.objectContaining({ content: 'echo: over stdio' }),
      expect.objectContaining({ content: 'echo: over http' }),
      expect.objectContaining({ content: `recorded e1 with key ${idempotencyKeyOf(handle.workflowId, 'toolu_rec')}` }),
    ]);
    // An error the server reports, and an input the server's own schema refuses (checked by the engine first).
    expect(resultsOf(fake.requests[2].body)).toEqual([
      expect.objectContaining({ is_error: true, content: 'the record is locked' }),
      expect.objectContaining({
        is_error: true,
        content: expect.stringContaining('text is 101 characters long, longer than 100'),
      }),
    ]);
    const events = await eventsOf(handle);
    expect(events.find((event) => event.type === 'tool.start' && event.name === 'remote__echo')).toMatchObject({
      source: 'mcp',
      server: 'remote',
    });
    expect(events.find((event) => event.type === 'tool.end' && event.name === 'local__echo')).toMatchObject({
      source: 'mcp',
      server: 'local',
      isError: false,
    });
  });

  it("a call that outlives the server's timeout is an error result within the timeout plus 2 s; the turn goes on", async () => {
    fake.enqueue(
      { content: [toolUse('local__slow', { ms: 10_000 })] },
      { content: [toolUse('local__echo', { text: 'still here' })] },
      { content: [text('Gave up on it.')] },
    );
    const { result, events } = await runTurn(env.client, taskQueue, 'slow');
    expect(result).toMatchObject({ status: 'completed', output: 'Gave up on it.' });
    expect(resultsOf(fake.requests[1].body)[0]).toMatchObject({
      is_error: true,
      content: 'MCP server local did not answer slow within 1000 ms; it may still be running it.',
    });
    expect(resultsOf(fake.requests[2].body)[0]).toMatchObject({ content: 'echo: still here' });
    const start = events.find((event) => event.type === 'tool.start' && event.name === 'local__slow')!;
    const end = events.find((event) => event.type === 'tool.end' && event.name === 'local__slow')!;
    const elapsed = Date.parse(end.at) - Date.parse(start.at);
    expect(elapsed).toBeGreaterThanOrEqual(1000);
    expect(elapsed).toBeLessThan(3000);
  });

  it('a server configured with approval: always asks before every call of its tools', async () => {
    const { McpServerConnection } = await import('../lib/tools/mcp');
    // The same stdio server, configured to ask before every call.
    const strict = new McpServerConnection({
      name: 'strict',
      transport: 'stdio',
      command: process.execPath,
      args: ['--import', 'tsx', serverScript, 'stdio'],
      env: {},
      cwd: repoRoot,
      timeoutMs: 5000,
      category: 'mcp',
      approval: 'always',
    });
    const { tools } = await strict.discover();
    expect(tools.every((tool) => tool.spec.needsApproval)).toBe(true);
    await strict.close();
  });

  it('a server that is down gives a clear error result at once; the turn goes on', async () => {
    httpServer.kill();
    await new Promise((resolve) => httpServer.once('exit', resolve));
    fake.enqueue(
      { content: [toolUse('remote__echo', { text: 'anyone?' })] },
      { content: [text('The server is down.')] },
    );
    const { result, events } = await runTurn(env.client, taskQueue, 'echo');
    expect(result).toMatchObject({ status: 'completed', output: 'The server is down.' });
    expect(resultsOf(fake.requests[1].body)[0]).toMatchObject({
      is_error: true,
      content: 'MCP server remote is down: ECONNREFUSED. echo did not run, or its answer was lost.',
    });
    const start = events.find((event) => event.type === 'tool.start')!;
    const end = events.find((event) => event.type === 'tool.end')!;
    // At once: far from the server's 20 s timeout.
    expect(Date.parse(end.at) - Date.parse(start.at)).toBeLessThan(5000);
  });
});
