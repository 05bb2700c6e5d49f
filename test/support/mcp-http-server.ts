import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const repoRoot = path.resolve(__dirname, '..', '..');
/** The test MCP server's script (run as its own process: stdio, or http with a port). */
export const mcpTestServerScript = path.join(repoRoot, 'test', 'support', 'mcp-test-server.ts');

/** The test MCP server over HTTP on a free port (with `token`, it refuses requests without that bearer token). */
export async function startMcpHttpServer(token?: string): Promise<{ child: ChildProcess; port: number }> {
  const args = ['--import', 'tsx', mcpTestServerScript, 'http', '0', ...(token ? [token] : [])];
  const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the MCP test server did not start within 30 s')), 30_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      const match = /listening (\d+)/.exec(chunk.toString());
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.on('exit', (code) => reject(new Error(`the MCP test server exited (${code})`)));
  });
  return { child, port };
}
