import { isToolName } from '../skills/names';

/** Name rules of tools, categories and MCP servers; and how an MCP tool's name is made to fit the tool name rule. */

export { isToolName };

/** Categories: a lowercase word, with `_` or `-` inside (seed 002 has `code_exec`). */
export function isCategoryName(value: string): boolean {
  return /^[a-z][a-z0-9_-]{0,31}$/.test(value);
}

/** MCP server names: lowercase letters, digits and single hyphens, so `SERVER__TOOL` is never ambiguous. */
export function isServerName(value: string): boolean {
  return /^[a-z0-9]+(-[a-z0-9]+)*$/.test(value) && value.length <= 32;
}

export const mcpNameSeparator = '__';

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
 * The name an MCP server's tool is offered under: `SERVER__TOOL`. A tool name with characters the rule does not allow
 * (`.`, `/`, spaces) has them replaced by `_`, and a name that is changed or too long gets a tag of its original name
 * (`SERVER__SOME_TOOL_1a2b3c4d`), so two tools never end up with the same name.
 */
export function mcpToolName(server: string, tool: string): string {
  const prefix = `${server}${mcpNameSeparator}`;
  const plain = `${prefix}${tool}`;
  if (isToolName(plain)) return plain;
  const cleaned = tool.replace(/[^A-Za-z0-9_-]/g, '_');
  return `${prefix}${cleaned.slice(0, 64 - prefix.length - 9)}_${fnv1a(tool)}`;
}
