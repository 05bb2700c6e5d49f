import { isCategoryName, isToolName } from './names';
import type { ToolSpec } from './types';

/**
 * Grants: how a skill (its spec field `allowed-tools` and its sidecar `tools`) or the configuration
 * (SKILLFLOW_DEFAULT_TOOLS) says which registered tools the model may see. A grant is a tool name (`calculator`), a
 * category (`category:web`), or every tool of an MCP server (`mcp:github`). The engine's own tools need no grant.
 */
export type Grant =
  { kind: 'tool'; name: string } | { kind: 'category'; category: string } | { kind: 'server'; server: string };

export const categoryGrantPrefix = 'category:';
export const serverGrantPrefix = 'mcp:';

/** The grant a word means, or null when it is none (e.g. `Bash(git:*)`, another runtime's syntax). */
export function parseGrant(word: string): Grant | null {
  if (word.startsWith(categoryGrantPrefix)) {
    const category = word.slice(categoryGrantPrefix.length);
    return isCategoryName(category) ? { kind: 'category', category } : null;
  }
  if (word.startsWith(serverGrantPrefix)) {
    // The server's name as the MCP configuration writes it (`mcp:GitHub`, `mcp:my_server`).
    const server = word.slice(serverGrantPrefix.length);
    return server.trim() === server && server !== '' ? { kind: 'server', server } : null;
  }
  return isToolName(word) ? { kind: 'tool', name: word } : null;
}

/** A grant as a regular expression source (skillflow.yaml's JSON Schema); parseGrant is the rule. */
export const grantPattern = '^([A-Za-z0-9_-]{1,64}|category:[a-z][a-z0-9_-]{0,31}|mcp:\\S(.*\\S)?)$';

/** What a grant in words should look like, for error messages and docs. */
export const grantSyntax =
  "a tool name (letters, digits, _ and -), category:NAME or mcp:SERVER (the server's name as the MCP configuration writes it)";

/** The words of an `allowed-tools` string (space-separated, as the spec writes it). */
export function allowedToolsWords(allowedTools: string | null | undefined): string[] {
  return (allowedTools ?? '').split(/\s+/).filter((word) => word !== '');
}

/** A skill's grants: its `allowed-tools` words and its sidecar `tools`, once each. Older manifests may lack either. */
export function skillGrants(manifest: { allowedTools?: string | null; tools?: string[] | null }): string[] {
  return [...new Set([...allowedToolsWords(manifest.allowedTools), ...(manifest.tools ?? [])])];
}

/** What a grant reads of a tool: a whole spec and a header both have it. */
type Grantable = Pick<ToolSpec, 'name' | 'category' | 'source' | 'server'>;

function matches(grant: Grant, tool: Grantable): boolean {
  switch (grant.kind) {
    case 'tool':
      return grant.name === tool.name;
    case 'category':
      return grant.category === tool.category;
    case 'server':
      return tool.source === 'mcp' && grant.server === tool.server;
  }
}

/** The registered tools these grants give, in the registry's order (words that are no grant give nothing). */
export function grantedTools<T extends Grantable>(tools: readonly T[], grants: readonly string[]): T[] {
  const parsed = grants.map(parseGrant).filter((grant): grant is Grant => grant !== null);
  return tools.filter((tool) => parsed.some((grant) => matches(grant, tool)));
}

/** The grants that give none of these tools: worth a warning (a typo, or a tool nobody registered). */
export function unmatchedGrants(
  tools: readonly Grantable[],
  grants: readonly string[],
  ignore: readonly string[] = [],
): string[] {
  return grants.filter((word) => {
    if (ignore.includes(word)) return false;
    const grant = parseGrant(word);
    return grant !== null && !tools.some((tool) => matches(grant, tool));
  });
}
