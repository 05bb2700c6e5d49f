import path from 'node:path';

/** What the MCP test server's many-tools mode (MCP_TEST_MANY) begins each detail of its tool `tool_NN` with. */
export const manyToolMark = (index: number) => `MANY-TOOL-${String(index).padStart(2, '0')}-DETAIL`;

const repoRoot = path.resolve(__dirname, '..', '..');
const serverScript = path.join(repoRoot, 'test', 'support', 'mcp-test-server.ts');

/**
 * The MCP configuration entry of a stdio test server of `count` tools, each with a description and an input schema of
 * about these sizes (JSON characters); with `readyFile`, it is down until that file exists.
 */
export function manyToolsServer(count: number, descriptionChars: number, schemaChars: number, readyFile?: string) {
  return {
    transport: 'stdio',
    command: process.execPath,
    args: ['--import', 'tsx', serverScript, 'stdio'],
    cwd: repoRoot,
    env: {
      MCP_TEST_MANY: `${count},${descriptionChars},${schemaChars}`,
      ...(readyFile ? { MCP_TEST_READY_FILE: readyFile } : {}),
    },
    timeout: '20s',
  };
}
