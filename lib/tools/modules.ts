import fs from 'node:fs';
import path from 'node:path';
import { isRegisteredTool, type RegisteredTool } from './define-tool';
import { ToolRegistryError } from './registry';

const moduleFile = /^[^._].*\.(ts|mts|cts|js|mjs|cjs)$/;

/**
 * The tool modules of the tools folder (SKILLFLOW_TOOLS_DIR): every `.ts`/`.js` file directly in it (not starting
 * with `.` or `_`, not `.d.ts`) must export at least one `defineTool(...)`. They are the operator's code, loaded once
 * at worker start-up; a module that fails to load stops the start-up with its file name and error.
 */
export async function loadToolModules(dir: string): Promise<RegisteredTool[]> {
  if (!fs.existsSync(dir)) return [];
  const files = fs
    .readdirSync(dir)
    .filter((name) => moduleFile.test(name) && !name.endsWith('.d.ts'))
    .sort();
  const tools: RegisteredTool[] = [];
  for (const file of files) {
    let exported: Record<string, unknown>;
    try {
      exported = (await import(path.join(dir, file))) as Record<string, unknown>;
    } catch (err) {
      throw new ToolRegistryError(
        `Tool module ${path.join(dir, file)} could not be loaded: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    const found = [
      ...new Set(
        Object.values(exported).flatMap((value) =>
          isRegisteredTool(value)
            ? [value]
            : isRegisteredTool((value as { default?: unknown })?.default)
              ? [(value as { default: RegisteredTool }).default]
              : [],
        ),
      ),
    ];
    if (found.length === 0)
      throw new ToolRegistryError(
        `Tool module ${path.join(dir, file)} exports no tool: export the result of defineTool(...).`,
      );
    tools.push(...found.map((tool) => ({ ...tool, spec: { ...tool.spec, source: 'custom' as const } })));
  }
  return tools;
}
