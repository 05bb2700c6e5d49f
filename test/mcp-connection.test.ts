import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../lib/dev-server';
import type { ToolContext } from '../lib/tools/define-tool';
import { McpServerConnection, type McpServerConfig } from '../lib/tools/mcp';
import { maxToolPages } from '../lib/tools/mcp/server';

/**
 * One MCP server connection without Temporal: a server (test/support/mcp-test-server.ts `faulty`) that answers with an
 * error whose text looks like a transport failure, whose tool list never ends, and that dies during calls; and an HTTP
 * server that is not there. Every call runs against a deadline of its own, well under the server's timeout. The tests
 * share the faulty server, in order: the first starts it, the last ends it.
 */
const repoRoot = path.resolve(__dirname, '..');
const serverScript = path.join(repoRoot, 'test', 'support', 'mcp-test-server.ts');
/** Long, so that the fractions of it below leave a loaded machine room and still tell a timeout from a quick failure. */
const timeoutMs = 120_000;
/** Well under the server's timeout: a call the engine waits the timeout out for fails here first. */
const deadlineMs = timeoutMs / 3;
/** For what starts a process (a server, or the HTTP case's client), on a machine that may be busy. */
const startMs = 20_000;
const context: ToolContext = {
  callId: 'toolu_test',
  attempt: 1,
  signal: new AbortController().signal,
  heartbeat: () => undefined,
};

const stdioServer = (mode: string): McpServerConfig => ({
  name: mode,
  transport: 'stdio',
  command: process.execPath,
  args: ['--import', 'tsx', serverScript, mode],
  env: {},
  cwd: repoRoot,
  timeoutMs,
  category: 'mcp',
  approval: 'never',
});

/** The promise's value, or a failure naming `what` once `ms` have passed. */
async function settles<T>(promise: Promise<T>, what: string, ms = deadlineMs): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} did not settle within ${ms} ms (the server's timeout is ${timeoutMs} ms)`)),
      ms,
    );
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

describe('an MCP server connection', () => {
  const faulty = new McpServerConnection(stdioServer('faulty'));
  afterAll(() => faulty.close());
  /** The faulty server's process id: the same id, the same connection. */
  const pid = async () => (await settles(faulty.call('pid', {}, context), 'pid', startMs)).content;

  it('an error the server answers with is its error whatever its text (fetch failed, and a password): thrown for the generic internal error, never in a result, the server kept', async () => {
    const before = await pid();
    const outcome = await settles(
      faulty.call('secret-error', {}, context).then(
        (result) => ({ result }),
        (error: unknown) => ({ error }),
      ),
      'secret-error',
    );
    expect(outcome).toEqual({
      error: expect.objectContaining({ message: expect.stringContaining('password hunter2') }),
    });
    expect(await pid()).toBe(before);
  });

  it('discovery reads at most maxToolPages pages of a tool list that always offers another, and says so', async () => {
    const { tools, skipped } = await settles(faulty.discover(), 'discover', startMs);
    expect(tools.map((tool) => tool.spec.name)).toEqual(
      Array.from({ length: maxToolPages }, (_, i) => `faulty__t${i + 1}`),
    );
    expect(skipped).toEqual([
      `the tools after page ${maxToolPages} of its list (the server offers more pages; ${maxToolPages} are read)`,
    ]);
  });

  it('a stdio server that exits (also leaving a process that holds its pipes) or is killed during a call fails the call within a fraction of the timeout, saying how it ended; the next call starts it again', async () => {
    const pids: string[] = [];
    for (const [input, ended] of [
      [{ code: 3 }, 'it exited with code 3'],
      [{ signal: 'SIGKILL' }, 'it was ended by SIGKILL'],
      [{ code: 4, orphan: true }, 'it exited with code 4'],
    ] as const) {
      // The server that runs; after the first case, one started again by this call.
      pids.push(await pid());
      const started = Date.now();
      const result = await settles(faulty.call('exit', input, context), `exit ${JSON.stringify(input)}`);
      const elapsed = Date.now() - started;
      expect(result).toEqual({
        isError: true,
        content: `MCP server faulty is down: ${ended}. exit did not run, or its answer was lost.`,
      });
      expect(elapsed).toBeLessThan(timeoutMs / 6);
    }
    expect(new Set(pids).size).toBe(3);
  });

  it('an HTTP server that is not there is down by its error code, for calls and for discovery (in a process of its own: errors of the real realm)', async () => {
    const config = {
      name: 'gone',
      transport: 'http',
      url: `http://127.0.0.1:${await freePort()}/mcp`,
      headers: {},
      timeoutMs,
      category: 'mcp',
      approval: 'never',
    };
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(repoRoot, 'test', 'support', 'mcp-call.ts'),
        JSON.stringify(config),
        'echo',
        '{"text":"anyone?"}',
      ],
      {
        cwd: repoRoot,
        timeout: startMs,
      },
    );
    expect(JSON.parse(stdout)).toEqual({
      call: { isError: true, content: 'MCP server gone is down: ECONNREFUSED. echo did not run.' },
      discover: { thrown: 'ECONNREFUSED: fetch failed' },
    });
  });
});
