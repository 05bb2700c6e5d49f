import type { Config } from '../config';
import { unmatchedGrants } from '../../core/tools';
import { builtinTools } from './builtin';
import { loadToolModules } from './modules';
import { ToolRegistry } from './registry';

export type ToolSettings = Pick<
  Config,
  'defaultTools' | 'toolsDir' | 'mcpConfigPath' | 'httpFetchHosts' | 'httpFetchMaxBytes' | 'httpFetchTimeoutMs'
> &
  Partial<Pick<Config, 'toolCatalogMaxBytes'>>;

export interface BuiltRegistry {
  registry: ToolRegistry;
  /** Closes what the tools hold open (MCP connections). */
  close(): Promise<void>;
}

/** The worker's tool registry, built at start-up: the built-ins, the tools folder's modules, the MCP servers' tools. */
export async function buildToolRegistry(settings: ToolSettings, log: (line: string) => void): Promise<BuiltRegistry> {
  const builtins = builtinTools({
    hosts: settings.httpFetchHosts,
    maxBytes: settings.httpFetchMaxBytes,
    timeoutMs: settings.httpFetchTimeoutMs,
  });
  const custom = await loadToolModules(settings.toolsDir);
  const registry = new ToolRegistry([...builtins, ...custom], settings.defaultTools, settings.toolCatalogMaxBytes);
  if (custom.length > 0) log(`tools from ${settings.toolsDir}: ${custom.map((tool) => tool.spec.name).join(', ')}`);
  // The MCP client (its SDK and schema libraries, several MB of heap) loads only for a worker that has MCP servers.
  const closeMcp = settings.mcpConfigPath
    ? await (await import('./mcp')).attachMcpServers(settings.mcpConfigPath, registry, log)
    : async () => undefined;
  for (const grant of unmatchedGrants(registry.specs, settings.defaultTools))
    log(`SKILLFLOW_DEFAULT_TOOLS grants ${grant}, which no registered tool matches (yet)`);
  return { registry, close: closeMcp };
}
