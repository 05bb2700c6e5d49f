import fs from 'node:fs';
import path from 'node:path';
import { parseDuration } from '../../../core/skills/durations';
import { isCategoryName, mcpServerPrefix, mcpToolNamePrefix } from '../../../core/tools';
import { expandVariables, type ExpandContext } from './expand';

/**
 * The MCP configuration file (SKILLFLOW_MCP_CONFIG), JSON, in any of the shapes users already have:
 *
 *   skillflow:                {"servers": {"docs": {"transport": "stdio", "command": "node", "args": ["docs-server.js"]}}}
 *   Claude Desktop / Code:    {"mcpServers": {"docs": {"command": "node", "args": [...], "env": {...}},
 *                                             "search": {"type": "http", "url": "https://...", "headers": {...}}}}
 *   VS Code (.vscode/mcp.json): {"servers": {"search": {"type": "sse", "url": "..."}}, "inputs": [...]}
 *
 * Strings take `${VAR}`, `${VAR:-default}` and `${env:VAR}` (expand.ts). skillflow's own fields (`timeout`,
 * `category`, `approval`) are read in every shape. docs/tools.md describes every field.
 */
export const approvalModes = ['destructive', 'always', 'never'] as const;
export type ApprovalMode = (typeof approvalModes)[number];

export const mcpTransports = ['stdio', 'http', 'sse'] as const;
export type McpTransport = (typeof mcpTransports)[number];

interface ServerCommon {
  /** As the file writes it: what `mcp:NAME` grants and events name; its tools' names come from it (core/tools/names.ts). */
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
  | (ServerCommon & { transport: 'http' | 'sse'; url: string; headers: Record<string, string> });

export class McpConfigError extends Error {
  override name = 'McpConfigError';
}

const knownFields = [
  'transport',
  'type',
  'command',
  'args',
  'env',
  'cwd',
  'url',
  'headers',
  'timeout',
  'category',
  'approval',
];
const defaultTimeoutMs = 30_000;

const isMap = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const stringMap = (value: unknown): value is Record<string, string> =>
  isMap(value) && Object.values(value).every((entry) => typeof entry === 'string');

/** Reads and checks the file; every problem is reported at once, with the server and field, and never a variable's value. */
export function loadMcpConfig(file: string, env: Record<string, string | undefined> = process.env): McpServerConfig[] {
  let data: unknown;
  try {
    data = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new McpConfigError(
      `SKILLFLOW_MCP_CONFIG ${file} cannot be read as JSON: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const { key, servers } = serversOf(data, file);
  const folder = path.dirname(file);
  const context: ExpandContext = {
    env,
    workspaceFolder: path.basename(folder) === '.vscode' ? path.dirname(folder) : folder,
  };
  const problems: string[] = [];
  const configs = Object.entries(servers).flatMap(([name, raw]) => {
    const config = serverConfig(name, raw, `${key}.${name}`, { folder, context, problems });
    return config ? [config] : [];
  });
  problems.push(...nameClashes(Object.keys(servers)));
  if (problems.length > 0) throw new McpConfigError(`${file} has problems:\n  - ${problems.join('\n  - ')}`);
  return configs;
}

/** The servers map: `servers` (skillflow, VS Code) or `mcpServers` (Claude Desktop, Claude Code); other keys are left alone. */
function serversOf(data: unknown, file: string): { key: string; servers: Record<string, unknown> } {
  const shape = `must hold {"mcpServers": {"NAME": {...}}} (Claude Desktop, Claude Code) or {"servers": {"NAME": {...}}} (VS Code, skillflow)`;
  if (!isMap(data)) throw new McpConfigError(`${file} ${shape}.`);
  const keys = ['servers', 'mcpServers'].filter((key) => data[key] !== undefined);
  if (keys.length !== 1)
    throw new McpConfigError(
      `${file} ${keys.length === 0 ? shape : 'holds both "servers" and "mcpServers": keep one'}.`,
    );
  const servers = data[keys[0]];
  if (!isMap(servers)) throw new McpConfigError(`${file} ${shape}.`);
  return { key: keys[0], servers };
}

interface Reading {
  folder: string;
  context: ExpandContext;
  problems: string[];
}

function serverConfig(
  name: string,
  raw: unknown,
  at: string,
  { folder, context, problems }: Reading,
): McpServerConfig | null {
  const problem = (field: string, message: string) => problems.push(`${at}.${field} ${message}`);
  if (!isMap(raw)) {
    problems.push(`${at} must be an object of fields.`);
    return null;
  }
  const entry = raw;
  for (const field of Object.keys(entry))
    if (!knownFields.includes(field)) problem(field, `is not a known field (${knownFields.join(', ')}).`);
  const expand = (field: string, value: string): string => {
    const expanded = expandVariables(value, context);
    if (expanded.ok) return expanded.value;
    problem(field, `cannot be read: ${expanded.problem}.`);
    return value;
  };
  const timeoutMs = entry.timeout === undefined ? defaultTimeoutMs : parseDuration(entry.timeout);
  if (timeoutMs === null || timeoutMs > 3_600_000) problem('timeout', 'must be a duration such as "30s" (at most 1h).');
  const category = entry.category ?? 'mcp';
  if (typeof category !== 'string' || !isCategoryName(category)) problem('category', 'must be a lowercase word.');
  const approval = entry.approval ?? 'destructive';
  if (!approvalModes.includes(approval as ApprovalMode))
    problem('approval', `must be one of ${approvalModes.join(', ')}.`);
  const common: ServerCommon = {
    name,
    timeoutMs: timeoutMs ?? defaultTimeoutMs,
    category: String(category),
    approval: approval as ApprovalMode,
  };

  const transport = transportOf(entry, problem);
  if (transport === 'stdio') {
    if (typeof entry.command !== 'string' || entry.command === '') problem('command', 'must be the program to run.');
    const argsOk =
      entry.args === undefined || (Array.isArray(entry.args) && entry.args.every((arg) => typeof arg === 'string'));
    if (!argsOk) problem('args', 'must be a list of strings.');
    if (entry.env !== undefined && !stringMap(entry.env)) problem('env', 'must map names to strings.');
    if (entry.cwd !== undefined && typeof entry.cwd !== 'string') problem('cwd', 'must be a folder.');
    const args = argsOk ? ((entry.args as string[] | undefined) ?? []) : [];
    const vars = stringMap(entry.env) ? entry.env : {};
    return {
      ...common,
      transport,
      command: expand('command', String(entry.command ?? '')),
      args: args.map((arg, index) => expand(`args[${index}]`, arg)),
      env: Object.fromEntries(Object.entries(vars).map(([key, value]) => [key, expand(`env.${key}`, value)])),
      ...(typeof entry.cwd === 'string' ? { cwd: path.resolve(folder, expand('cwd', entry.cwd)) } : {}),
    };
  }
  if (transport === 'http' || transport === 'sse') {
    const url = typeof entry.url === 'string' ? expand('url', entry.url) : undefined;
    if (!isHttpUrl(url))
      problem(
        'url',
        `must be the server's http(s) URL${typeof entry.url === 'string' && url !== entry.url ? ' once its variables are replaced' : ''}.`,
      );
    if (entry.headers !== undefined && !stringMap(entry.headers))
      problem('headers', 'must map header names to strings.');
    const headers = stringMap(entry.headers) ? entry.headers : {};
    return {
      ...common,
      transport,
      url: String(url),
      headers: Object.fromEntries(
        Object.entries(headers).map(([key, value]) => [key, expand(`headers.${key}`, value)]),
      ),
    };
  }
  return null;
}

/** `transport` (skillflow) or `type` (Claude Code, VS Code); an entry with a `command` and neither is stdio. */
function transportOf(
  entry: Record<string, unknown>,
  problem: (field: string, message: string) => void,
): McpTransport | null {
  if (entry.transport !== undefined && entry.type !== undefined) {
    problem('type', 'and transport say the same thing: keep one.');
    return null;
  }
  const field = entry.type !== undefined ? 'type' : 'transport';
  const value = entry[field] ?? (entry.command !== undefined ? 'stdio' : undefined);
  if (mcpTransports.includes(value as McpTransport)) return value as McpTransport;
  problem(
    field,
    value === undefined
      ? 'is missing: give "command" (a stdio server), or "type": "http" or "sse" with "url".'
      : `must be one of ${mcpTransports.map((name) => `"${name}"`).join(', ')}.`,
  );
  return null;
}

function isHttpUrl(value: string | undefined): boolean {
  if (value === undefined) return false;
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

/** Server names no tool name can be made from, and names whose tools would be named alike: each with how to fix it. */
function nameClashes(names: string[]): string[] {
  const problems: string[] = [];
  const byPrefix = new Map<string, string>();
  for (const name of names) {
    const prefix = mcpServerPrefix(name);
    if (prefix === null) {
      problems.push(
        `server name ${JSON.stringify(name)} gives no tool name: use a name with at least one letter or digit (a-z, A-Z, 0-9).`,
      );
      continue;
    }
    const other = byPrefix.get(prefix);
    if (other !== undefined)
      problems.push(
        `servers ${JSON.stringify(other)} and ${JSON.stringify(name)} would both name their tools ${prefix}TOOL: rename one.`,
      );
    else byPrefix.set(prefix, name);
  }
  // The tools of a server named "mcp" are named mcp__TOOL, which a tool "x__y" makes look like a tool of a server "x".
  const ownPrefix = `${mcpToolNamePrefix}__`;
  const other = names.find((name) => name !== mcpToolNamePrefix && mcpServerPrefix(name)?.startsWith(ownPrefix));
  if (names.includes(mcpToolNamePrefix) && other !== undefined) {
    problems.push(
      `a server named "${mcpToolNamePrefix}" and ${JSON.stringify(other)} could give tools the same name (${ownPrefix}...): rename "${mcpToolNamePrefix}".`,
    );
  }
  return problems;
}
