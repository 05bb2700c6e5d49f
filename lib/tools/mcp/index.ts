import { sizeOf } from '../catalog-bound';
import type { RegisteredTool } from '../define-tool';
import { ToolCatalogBoundError, type ToolRegistry } from '../registry';
import { loadMcpConfig } from './config';
import { McpServerConnection } from './server';

export { loadMcpConfig, McpConfigError, type McpServerConfig } from './config';
export { idempotencyMetaKey, McpServerConnection } from './server';

/** How often a server that was down at start-up is tried again (its tools reach turns that start after it answers). */
export const rediscoverEveryMs = 30_000;

/**
 * Connects every server of the MCP configuration and registers its tools. A server that is down is reported and tried
 * again every 30 s in the background; its tools join the registry when it answers. A server whose tools would take the
 * tool catalog past its bound (SKILLFLOW_TOOL_CATALOG_MAX_BYTES), at start-up or when it answers later, has none of
 * them registered, is reported with the sizes and what to do, and is not tried again. Returns what closes them all.
 */
export async function attachMcpServers(
  file: string,
  registry: ToolRegistry,
  log: (line: string) => void,
  retryEveryMs = rediscoverEveryMs,
): Promise<() => Promise<void>> {
  const connections = loadMcpConfig(file).map((config) => new McpServerConnection(config));
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;
  const discover = async (connection: McpServerConnection, attempt: number): Promise<void> => {
    const { name } = connection.config;
    try {
      const { tools, skipped } = await connection.discover();
      for (const tool of skipped) log(`MCP server ${name}: skipped ${tool}`);
      if (!registered(registry, `MCP server ${name}`, tools, log)) return;
      const size = `the tool catalog now ${sizeOf(registry.catalogBytes)} of ${sizeOf(registry.maxCatalogBytes)}`;
      log(
        `MCP server ${name}: ${tools.length} tools (${tools.map((tool) => tool.spec.name).join(', ') || 'none'})${attempt > 1 ? ' after it was down' : ''}; ${size}`,
      );
    } catch (err) {
      if (stopped) return;
      if (attempt === 1)
        log(
          `MCP server ${name} is down (${err instanceof Error ? err.message : String(err)}); trying again every ${retryEveryMs / 1000} s`,
        );
      const timer = setTimeout(() => {
        timers.delete(timer);
        void discover(connection, attempt + 1);
      }, retryEveryMs);
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

/** Adds a server's tools; false, with the reason logged, when the catalog's bound refuses them (the server answered: no retry). */
function registered(
  registry: ToolRegistry,
  from: string,
  tools: RegisteredTool[],
  log: (line: string) => void,
): boolean {
  try {
    registry.add(tools, from);
    return true;
  } catch (err) {
    if (!(err instanceof ToolCatalogBoundError)) throw err;
    log(err.message);
    return false;
  }
}
