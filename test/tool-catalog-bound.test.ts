import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { detailDigestOf } from '../core/tools';
import { builtinTools } from '../lib/tools/builtin';
import { defineTool, Type } from '../lib/tools/define-tool';
import { attachMcpServers } from '../lib/tools/mcp';
import { ToolCatalogBoundError, ToolRegistry } from '../lib/tools/registry';
import { manyToolsServer } from './support/many-tools';

/**
 * The tool catalog's bound (SKILLFLOW_TOOL_CATALOG_MAX_BYTES): an MCP server of 80 tools, each within the per-tool caps
 * (a 4 KiB description, a 28 KiB input schema), makes a 2.55 MiB catalog, past Temporal's 2 MiB payload limit; its
 * tools are refused when it only answers at a rediscovery, with a log line naming the server, the sizes and what to do
 * (at start-up: test/tool-catalog-history.test.ts). Without the bound they were all registered.
 */
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-catalog-bound-'));

function writeConfig(name: string, servers: Record<string, unknown>): string {
  const file = path.join(dir, `${name}.json`);
  fs.writeFileSync(file, JSON.stringify({ servers }));
  return file;
}

/** Resolves once `lines` holds a line matching `pattern`; rejects after `ms`. */
async function lineMatching(lines: string[], pattern: RegExp, ms: number): Promise<string> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = lines.find((line) => pattern.test(line));
    if (found) return found;
    if (Date.now() > deadline)
      throw new Error(`no line matched ${pattern} within ${ms} ms; lines: ${lines.join(' | ')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const boundLine =
  /^MCP server huge: 80 tools of 2\.5\d MiB \(the JSON of their specs\) would make the tool catalog 2\.5\d MiB with the [\d.]+ KiB registered before, over its bound of 512\.0 KiB \(SKILLFLOW_TOOL_CATALOG_MAX_BYTES\); none of them is registered\. Offer fewer tools or shorter descriptions and input schemas, or raise SKILLFLOW_TOOL_CATALOG_MAX_BYTES \(at most 1\.50 MiB\)\.$/;

describe('the tool catalog has a bound', () => {
  it('an MCP server that was down at start-up and whose tools would take the catalog past it is refused when it answers at a rediscovery, and not tried again', async () => {
    const readyFile = path.join(dir, 'huge-ready');
    const registry = new ToolRegistry(builtinTools());
    const before = registry.specs.length;
    const lines: string[] = [];
    const close = await attachMcpServers(
      writeConfig('rediscovery', { huge: manyToolsServer(80, 4096, 29_000, readyFile) }),
      registry,
      (line) => lines.push(line),
      100,
    );
    try {
      await lineMatching(lines, /^MCP server huge is down \(.*\); trying again every 0\.1 s$/, 20_000);
      fs.writeFileSync(readyFile, '');
      await lineMatching(lines, boundLine, 20_000);
      expect(registry.specs).toHaveLength(before);
      // Refused, not down: no further attempt logs or registers anything.
      const seen = lines.length;
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(lines.slice(seen)).toEqual([]);
    } finally {
      await close();
    }
  }, 60_000);

  it('the built-in tools and modules past it stop the worker at start-up with the same words', () => {
    const big = defineTool({
      name: 'big',
      description: 'x'.repeat(20_000),
      category: 'data',
      input: Type.Object({}),
      idempotent: true,
      run: () => 'ok',
    });
    expect(() => new ToolRegistry([...builtinTools(), big], [], 16 * 1024)).toThrow(ToolCatalogBoundError);
    expect(() => new ToolRegistry([...builtinTools(), big], [], 16 * 1024)).toThrow(
      /^The built-in tools and the tools folder's modules: \d+ tools of [\d.]+ KiB .* over its bound of 16\.0 KiB/,
    );
  });

  it('a run reads the catalog as headers, and each detail back by its digest', () => {
    const registry = new ToolRegistry(builtinTools(), ['calculator']);
    const reference = registry.catalogReference();
    expect(reference.rootGrants).toEqual(['calculator']);
    const calculator = registry.get('calculator')!.spec;
    const header = reference.headers.find((candidate) => candidate.name === 'calculator')!;
    expect(header).not.toHaveProperty('description');
    expect(header).not.toHaveProperty('inputSchema');
    expect(header).toMatchObject({
      category: calculator.category,
      source: 'builtin',
      idempotent: calculator.idempotent,
      needsApproval: false,
      detail: detailDigestOf(calculator),
    });
    expect(registry.detail('calculator', header.detail)).toEqual({
      description: calculator.description,
      inputSchema: calculator.inputSchema,
    });
    expect(registry.detail('calculator', 'another-digest')).toBeUndefined();
    expect(registry.detail('no_such_tool', header.detail)).toBeUndefined();
  });
});
