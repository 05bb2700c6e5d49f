import fs from 'node:fs';
import path from 'node:path';
import { parseDuration } from '../../../core/skills/durations';
import { isCategoryName, isServerName } from '../../../core/tools';

/**
 * The MCP configuration file (SKILLFLOW_MCP_CONFIG), JSON:
 *
 *   {"servers": {
 *     "docs":   {"transport": "stdio", "command": "node", "args": ["docs-server.js"], "env": {"TOKEN": "..."}, "timeout": "30s"},
 *     "search": {"transport": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ..."},
 *                "category": "search", "approval": "never"}}}
 *
 * docs/tools.md describes every field.
 */
export const approvalModes = ['destructive', 'always', 'never'] as const;
export type ApprovalMode = (typeof approvalModes)[number];

interface ServerCommon {
  name: string;
  /** How long one call may take; past it the model gets an error result (within this plus 2 s). */
  timeoutMs: number;
  /** The category of every tool of the server (`category:NAME` grants); default `mcp`. */
  category: string;
  /** Which tools need a human's approval: those the server does not mark read-only or non-destructive (default), all, none. */
  approval: ApprovalMode;
}

export type McpServerConfig =
  | (ServerCommon & { transport: 'stdio'; command: string; args: string[]; env: Record<string, string>; cwd?: string })
  | (ServerCommon & { transport: 'http'; url: string; headers: Record<string, string> });

export class McpConfigError extends Error {
  override name = 'McpConfigError';
}

const stringMap = (value: unknown): value is Record<string, string> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((entry) => typeof entry === 'string');

/** Reads and checks the file; every problem is reported at once, with the server and field. */
export function loadMcpConfig(file: string): McpServerConfig[] {
  let data: unknown;
  try {
    data = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new McpConfigError(`SKILLFLOW_MCP_CONFIG ${file} cannot be read as JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  const servers = (data as { servers?: unknown })?.servers;
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) throw new McpConfigError(`${file} must hold {"servers": {"NAME": {...}}}.`);
  const problems: string[] = [];
  const configs: McpServerConfig[] = [];
  for (const [name, raw] of Object.entries(servers)) {
    const at = (field: string) => `servers.${name}.${field}`;
    const entry = (raw ?? {}) as Record<string, unknown>;
    if (!isServerName(name)) problems.push(`server name ${JSON.stringify(name)} must be lowercase letters, digits and single hyphens (at most 32).`);
    const known = ['transport', 'command', 'args', 'env', 'cwd', 'url', 'headers', 'timeout', 'category', 'approval'];
    for (const key of Object.keys(entry)) if (!known.includes(key)) problems.push(`${at(key)} is not a known field (${known.join(', ')}).`);
    const timeoutMs = entry.timeout === undefined ? 30_000 : parseDuration(entry.timeout);
    if (timeoutMs === null || timeoutMs > 3_600_000) problems.push(`${at('timeout')} must be a duration such as "30s" (at most 1h).`);
    const category = entry.category ?? 'mcp';
    if (typeof category !== 'string' || !isCategoryName(category)) problems.push(`${at('category')} must be a lowercase word.`);
    const approval = entry.approval ?? 'destructive';
    if (!approvalModes.includes(approval as ApprovalMode)) problems.push(`${at('approval')} must be one of ${approvalModes.join(', ')}.`);
    const common = { name, timeoutMs: timeoutMs ?? 30_000, category: String(category), approval: approval as ApprovalMode };
    if (entry.transport === 'stdio') {
      if (typeof entry.command !== 'string' || entry.command === '') problems.push(`${at('command')} must be the program to run.`);
      if (entry.args !== undefined && !(Array.isArray(entry.args) && entry.args.every((arg) => typeof arg === 'string'))) problems.push(`${at('args')} must be a list of strings.`);
      if (entry.env !== undefined && !stringMap(entry.env)) problems.push(`${at('env')} must map names to strings.`);
      if (entry.cwd !== undefined && typeof entry.cwd !== 'string') problems.push(`${at('cwd')} must be a folder.`);
      configs.push({
        ...common,
        transport: 'stdio',
        command: String(entry.command),
        args: (entry.args as string[]) ?? [],
        env: (entry.env as Record<string, string>) ?? {},
        ...(typeof entry.cwd === 'string' ? { cwd: path.resolve(path.dirname(file), entry.cwd) } : {}),
      });
    } else if (entry.transport === 'http') {
      let ok = typeof entry.url === 'string';
      try {
        ok = ok && ['http:', 'https:'].includes(new URL(entry.url as string).protocol);
      } catch {
        ok = false;
      }
      if (!ok) problems.push(`${at('url')} must be the server's http(s) URL.`);
      if (entry.headers !== undefined && !stringMap(entry.headers)) problems.push(`${at('headers')} must map header names to strings.`);
      configs.push({ ...common, transport: 'http', url: String(entry.url), headers: (entry.headers as Record<string, string>) ?? {} });
    } else {
      problems.push(`${at('transport')} must be "stdio" or "http".`);
    }
  }
  if (problems.length > 0) throw new McpConfigError(`${file} has problems:\n  - ${problems.join('\n  - ')}`);
  return configs;
}
