import { isToolName } from '../skills/names';

/** Name rules of tools, categories and MCP servers; and how an MCP tool's name is made to fit the tool name rule. */

export { isToolName };

/** Categories: a lowercase word, with `_` or `-` inside (seed 002 has `code_exec`). */
export function isCategoryName(value: string): boolean {
  return /^[a-z][a-z0-9_-]{0,31}$/.test(value);
}

/**
 * The MCP server names whose tools are named `SERVER__TOOL`: lowercase letters, digits and single hyphens, at most 32.
 * Any other server name is accepted too, and its tools are named as Claude Code names them (`mcpServerPrefix`).
 */
export function isServerName(value: string): boolean {
  return /^[a-z0-9]+(-[a-z0-9]+)*$/.test(value) && value.length <= maxServerNameChars;
}

const maxServerNameChars = 32;
export const mcpNameSeparator = '__';
/** The start of the tool names of a server whose name is not `isServerName`'s: `mcp__SERVER__TOOL`. */
export const mcpToolNamePrefix = 'mcp';

/** FNV-1a (32 bits) as 8 hex digits: a short, stable tag that tells apart names that had to be changed. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

/**
 * What an MCP server's tool names start with, or null for a name no tool name can be made from (empty, or nothing but
 * characters outside a-z, A-Z, 0-9 and -). A name `isServerName` accepts keeps `SERVER__`; any other is made safe as
 * Claude Code does, `mcp__SAFE__`: every run of other characters becomes one `_` (so SAFE never holds `__`), and a safe
 * name longer than 32 is cut, with a tag of the whole name.
 */
export function mcpServerPrefix(server: string): string | null {
  if (isServerName(server)) return `${server}${mcpNameSeparator}`;
  const safe = server.replace(/[^A-Za-z0-9-]+/g, '_').replace(/^_+|_+$/g, '');
  if (!/[A-Za-z0-9]/.test(safe)) return null;
  const fitted = safe.length <= maxServerNameChars ? safe : `${safe.slice(0, maxServerNameChars - 9)}_${fnv1a(server)}`;
  return `${mcpToolNamePrefix}${mcpNameSeparator}${fitted}${mcpNameSeparator}`;
}

/**
 * The name an MCP server's tool is offered under: `SERVER__TOOL` (`mcp__SAFE__TOOL` for other server names). A tool name with characters the rule does not allow
 * (`.`, `/`, spaces) has them replaced by `_`, and a name that is changed or too long gets a tag of its original name
 * (`SERVER__SOME_TOOL_1a2b3c4d`), so two tools never end up with the same name.
 */
export function mcpToolName(server: string, tool: string): string {
  const prefix = mcpServerPrefix(server);
  if (prefix === null) throw new Error(`MCP server name ${JSON.stringify(server)} gives no tool name`);
  const plain = `${prefix}${tool}`;
  if (isToolName(plain)) return plain;
  const cleaned = tool.replace(/[^A-Za-z0-9_-]/g, '_');
  return `${prefix}${cleaned.slice(0, 64 - prefix.length - 9)}_${fnv1a(tool)}`;
}
