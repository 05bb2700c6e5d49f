import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { grantedTools, mcpToolName } from '../core/tools';
import { buildToolRegistry, type BuiltRegistry } from '../lib/tools/build';
import { loadMcpConfig, McpConfigError } from '../lib/tools/mcp';
import { startMcpHttpServer } from './support/mcp-http-server';

/**
 * MCP configuration files in the shapes users have (Claude Desktop, Claude Code's .mcp.json, VS Code's
 * .vscode/mcp.json; fixtures in test/fixtures/mcp-configs), with ${VAR}, ${VAR:-default} and ${env:VAR}: they load, and
 * their tools answer from the test MCP server (test/support/mcp-test-server.ts) on stdio, streamable HTTP and SSE,
 * the HTTP ones only with the bearer token the headers carry. No Temporal: the registry runs the tools directly.
 */
const repoRoot = path.resolve(__dirname, '..');
const fixtures = path.join(repoRoot, 'test', 'fixtures', 'mcp-configs');
const serverScript = path.join(repoRoot, 'test', 'support', 'mcp-test-server.ts');
const token = 'tok-3f9a7c';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-mcp-formats-'));

let httpServer: ChildProcess | undefined;
let port = 0;
const opened: BuiltRegistry[] = [];

async function startHttpServer(): Promise<void> {
  ({ child: httpServer, port } = await startMcpHttpServer(token));
}

const testEnv = () => ({
  MCP_TEST_SERVER_SCRIPT: serverScript,
  MCP_TEST_PORT: String(port),
  MCP_TEST_TOKEN: token,
  MCP_TEST_CODE_PREFIX: 'code ',
});

/** The worker reads the file with its own environment: the variables are set for the build, then removed. */
async function registryOf(file: string, lines: string[] = []): Promise<BuiltRegistry> {
  const vars = testEnv();
  Object.assign(process.env, vars);
  try {
    const built = await buildToolRegistry(
      {
        defaultTools: [],
        toolsDir: path.join(dir, 'no-tools'),
        mcpConfigPath: file,
        httpFetchHosts: [],
        httpFetchMaxBytes: 1024,
        httpFetchTimeoutMs: 1000,
      },
      (line) => lines.push(line),
    );
    opened.push(built);
    return built;
  } finally {
    for (const name of Object.keys(vars)) delete process.env[name];
  }
}

async function call(built: BuiltRegistry, name: string, input: Record<string, unknown>) {
  return built.registry.run(
    { name, input, callId: `toolu_${name}` },
    { attempt: 1, signal: new AbortController().signal, heartbeat: () => undefined },
  );
}

const mcpNames = (built: BuiltRegistry) =>
  built.registry.specs
    .filter((spec) => spec.source === 'mcp')
    .map((spec) => spec.name)
    .sort();

beforeAll(startHttpServer, 40_000);
afterAll(async () => {
  await Promise.all(opened.map((built) => built.close()));
  httpServer?.kill();
});

describe('MCP configuration files as users have them', () => {
  it('Claude Desktop: mcpServers, an entry with command and no type is stdio; ${VAR} and ${VAR:-default} in args and env', async () => {
    const built = await registryOf(path.join(fixtures, 'claude_desktop_config.json'));
    expect(mcpNames(built)).toEqual([
      'mcp__GitHub__dotted_name_4c738d92',
      'mcp__GitHub__echo',
      'mcp__GitHub__fail',
      'mcp__GitHub__record',
      'mcp__GitHub__slow',
    ]);
    expect(await call(built, 'mcp__GitHub__echo', { text: 'hi' })).toEqual({
      content: 'desktop echo: hi',
      isError: false,
    });
    // Granted by the name the file writes; events name it so.
    expect(grantedTools(built.registry.specs, ['mcp:GitHub']).map((spec) => spec.server)).toEqual(
      Array(5).fill('GitHub'),
    );
    expect(grantedTools(built.registry.specs, ['mcp:github'])).toEqual([]);
  }, 60_000);

  it('Claude Code: type http with headers and type sse, ${VAR:-default} in the URL, a stdio entry with type', async () => {
    const lines: string[] = [];
    const built = await registryOf(path.join(fixtures, 'claude-code.mcp.json'), lines);
    expect(mcpNames(built)).toEqual(expect.arrayContaining(['mcp__my_server__echo', 'docs-sse__echo', 'local__echo']));
    expect(mcpNames(built)).toHaveLength(15);
    expect(await call(built, 'mcp__my_server__echo', { text: 'over http' })).toEqual({
      content: 'echo: over http',
      isError: false,
    });
    expect(await call(built, 'docs-sse__echo', { text: 'over sse' })).toEqual({
      content: 'echo: over sse',
      isError: false,
    });
    expect(await call(built, 'local__echo', { text: 'over stdio' })).toEqual({
      content: 'code echo: over stdio',
      isError: false,
    });
    expect(lines.join('\n')).not.toContain(token);
  }, 60_000);

  it('VS Code: servers with type, ${env:VAR} and ${workspaceFolder}, inputs left alone', async () => {
    const workspace = path.join(fixtures, 'vscode-workspace');
    const built = await registryOf(path.join(workspace, '.vscode', 'mcp.json'));
    expect(mcpNames(built)).toEqual(expect.arrayContaining(['mcp__Local_Files__echo', 'remote__echo']));
    expect(await call(built, 'mcp__Local_Files__echo', { text: 'a' })).toEqual({
      content: `vscode ${workspace} echo: a`,
      isError: false,
    });
    expect(await call(built, 'remote__echo', { text: 'b' })).toEqual({ content: 'echo: b', isError: false });
    expect(grantedTools(built.registry.specs, ['mcp:Local Files'])).toHaveLength(5);
  }, 60_000);

  it('without the token the headers carry, the HTTP server refuses: the headers are what reach it', async () => {
    const file = path.join(dir, 'no-token.json');
    fs.writeFileSync(
      file,
      JSON.stringify({ mcpServers: { bare: { type: 'http', url: 'http://127.0.0.1:${MCP_TEST_PORT}/mcp' } } }),
    );
    const lines: string[] = [];
    const built = await registryOf(file, lines);
    expect(mcpNames(built)).toEqual([]);
    expect(lines.join('\n')).toMatch(/MCP server bare is down/);
  }, 60_000);
});

describe('loadMcpConfig', () => {
  const write = (name: string, data: unknown) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, JSON.stringify(data));
    return file;
  };
  const problemsOf = (file: string, env: Record<string, string> = {}): string => {
    try {
      loadMcpConfig(file, env);
    } catch (err) {
      expect(err).toBeInstanceOf(McpConfigError);
      return (err as Error).message;
    }
    throw new Error(`${file} loaded`);
  };

  it('reads the same server from each shape the same way', () => {
    const env = { TOKEN: 'secret-value', HOST: 'mcp.example.com' };
    const expected = {
      name: 'search',
      transport: 'http',
      url: 'https://mcp.example.com/mcp',
      headers: { Authorization: 'Bearer secret-value' },
      timeoutMs: 30_000,
      category: 'mcp',
      approval: 'destructive',
    };
    const entry = { url: 'https://${HOST}/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } };
    expect(loadMcpConfig(write('own.json', { servers: { search: { transport: 'http', ...entry } } }), env)).toEqual([
      expected,
    ]);
    expect(loadMcpConfig(write('code.json', { mcpServers: { search: { type: 'http', ...entry } } }), env)).toEqual([
      expected,
    ]);
    const vscode = { url: 'https://${env:HOST}/mcp', headers: { Authorization: 'Bearer ${env:TOKEN}' } };
    expect(
      loadMcpConfig(write('vscode.json', { servers: { search: { type: 'http', ...vscode } }, inputs: [] }), env),
    ).toEqual([expected]);
  });

  it('a default applies when the variable is unset or empty; $ without a brace is kept', () => {
    const file = write('defaults.json', {
      mcpServers: {
        s: { command: '${CMD:-node}', args: ['${A:-x}', '$HOME', 'cost: $5'], env: { K: '${EMPTY:-fallback}' } },
      },
    });
    expect(loadMcpConfig(file, { A: 'set', EMPTY: '' })).toMatchObject([
      { command: 'node', args: ['set', '$HOME', 'cost: $5'], env: { K: 'fallback' } },
    ]);
  });

  it('an unset variable without a default is an error naming the variable, the field and the file, never a value', () => {
    const file = write('unset.json', {
      mcpServers: {
        GitHub: {
          type: 'http',
          url: 'https://${HOST}/mcp',
          headers: { Authorization: 'Bearer ${GITHUB_TOKEN}' },
          timeout: 'soon',
        },
      },
    });
    const message = problemsOf(file, { HOST: 'host-value-9q' });
    expect(message).toContain(file);
    expect(message).toContain(
      'mcpServers.GitHub.headers.Authorization cannot be read: the environment variable GITHUB_TOKEN is not set',
    );
    expect(message).toContain('${GITHUB_TOKEN:-default}');
    expect(message).toContain('mcpServers.GitHub.timeout must be a duration');
    expect(message).not.toContain('host-value-9q');
  });

  it('a URL that is wrong once expanded is refused without showing what it expanded to', () => {
    const message = problemsOf(write('bad-url.json', { mcpServers: { s: { type: 'http', url: '${URL}' } } }), {
      URL: 'ftp://user:pw-77x@example.com',
    });
    expect(message).toContain("mcpServers.s.url must be the server's http(s) URL once its variables are replaced.");
    expect(message).not.toContain('pw-77x');
  });

  it.each([
    [
      '${input:token} (VS Code prompts; a worker cannot)',
      { servers: { s: { type: 'http', url: 'https://x/mcp', headers: { A: '${input:token}' } } } },
      /servers\.s\.headers\.A cannot be read: \$\{input:token\} asks VS Code to prompt/,
    ],
    ['both shapes at once', { servers: {}, mcpServers: {} }, /holds both "servers" and "mcpServers": keep one/],
    ['neither shape', { tools: {} }, /must hold \{"mcpServers"/],
    [
      'type and transport',
      { servers: { s: { type: 'http', transport: 'http', url: 'https://x/mcp' } } },
      /servers\.s\.type and transport say the same thing: keep one/,
    ],
    [
      'an entry without command or type',
      { mcpServers: { s: { url: 'https://x/mcp' } } },
      /mcpServers\.s\.transport is missing: give "command" \(a stdio server\), or "type": "http" or "sse" with "url"/,
    ],
    [
      'an unknown type',
      { servers: { s: { type: 'ws', url: 'wss://x' } } },
      /servers\.s\.type must be one of "stdio", "http", "sse"/,
    ],
    [
      'names whose tools would be named alike',
      { mcpServers: { 'my server': { command: 'a' }, my_server: { command: 'b' } } },
      /servers "my server" and "my_server" would both name their tools mcp__my_server__TOOL: rename one/,
    ],
    [
      'a name with no letter or digit',
      { mcpServers: { 日本: { command: 'a' } } },
      /server name "日本" gives no tool name: use a name with at least one letter or digit/,
    ],
    [
      'a server named mcp beside a renamed one',
      { mcpServers: { mcp: { command: 'a' }, GitHub: { command: 'b' } } },
      /a server named "mcp" and "GitHub" could give tools the same name \(mcp__\.\.\.\): rename "mcp"/,
    ],
    [
      'a malformed reference',
      { mcpServers: { s: { command: '${not a name}' } } },
      /\$\{not a name\} is not a variable reference skillflow reads/,
    ],
  ])('refuses %s, saying how to fix it', (_case, data, message) => {
    expect(problemsOf(write('case.json', data))).toMatch(message);
  });
});

describe('MCP tool names', () => {
  it.each([
    ['github', 'create_issue', 'github__create_issue'],
    ['docs', 'dotted.name', 'docs__dotted_name_4c738d92'],
    ['GitHub', 'create_issue', 'mcp__GitHub__create_issue'],
    ['my_server', 'x', 'mcp__my_server__x'],
    ['my__server', 'x', 'mcp__my_server__x'],
    ['Local Files', 'read', 'mcp__Local_Files__read'],
    ['café', 'x', 'mcp__caf__x'],
    ['a-very-long-server-name-of-the-production-cluster', 'x', 'mcp__a-very-long-server-name_a8811173__x'],
  ])('server %j, tool %j: %s', (server, tool, name) => {
    expect(mcpToolName(server, tool)).toBe(name);
    expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
  });
});
