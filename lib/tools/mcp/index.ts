import type { ToolRegistry } from '../registry';
import { loadMcpConfig } from './config';
import { McpServerConnection } from './server';

export { loadMcpConfig, McpConfigError, type McpServerConfig } from './config';
export { idempotencyMetaKey, McpServerConnection } from './server';

/** How often a server that was down at start-up is tried again (its tools reach turns that start after it answers). */
export const rediscoverEveryMs = 30_000;

/**
 * Connects every server of the MCP configuration and registers its tools. A server that is down is reported and tried
 * again every 30 s in the background; its tools join the registry when it answers. Returns what closes them all.
 */
export async function attachMcpServers(file: string, registry: ToolRegistry, log: (line: string) => void): Promise<() => Promise<void>> {
  const connections = loadMcpConfig(file).map((config) => new McpServerConnection(config));
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;
  const discover = async (connection: McpServerConnection, attempt: number): Promise<void> => {
    const { name } = connection.config;
    try {
      const { tools, skipped } = await connection.discover();
      registry.add(tools);
      log(`MCP server ${name}: ${tools.length} tools (${tools.map((tool) => tool.spec.name).join(', ') || 'none'})${attempt > 1 ? ' after it was down' : ''}`);
      for (const tool of skipped) log(`MCP server ${name}: skipped ${tool}`);
    } catch (err) {
      if (stopped) return;
      if (attempt === 1) log(`MCP server ${name} is down (${err instanceof Error ? err.message : String(err)}); trying again every ${rediscoverEveryMs / 1000} s`);
      const timer = setTimeout(() => {
        timers.delete(timer);
        void discover(connection, attempt + 1);
      }, rediscoverEveryMs);
      timer.unref();
      timers.add(timer);
    }
  };
  await Promise.all(connections.map((connection) => discover(connection, 1)));
  return async () => {
    stopped = true;
    for (const timer of timers) clearTimeout(timer);
    await Promise.all(connections.map((connection) => connection.close()));
  };
}
