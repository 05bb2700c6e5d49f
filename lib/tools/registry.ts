import {
  headerOf,
  type ToolCatalog,
  type ToolCatalogReference,
  type ToolDetail,
  type ToolHeader,
  type ToolRunInput,
  type ToolRunResult,
  type ToolSpec,
} from '../../core/tools';
import { defaultMaxToolCatalogBytes, maxToolCatalogBytesLimit, sizeOf } from './catalog-bound';
import { ToolError, type RegisteredTool, type ToolContext } from './define-tool';

/** The longest tool result kept (characters): it travels in workflow history, under Temporal's 2 MiB payload limit. */
export const maxToolResultChars = 200_000;

export class ToolRegistryError extends Error {
  override name = 'ToolRegistryError';
}

/** Tools refused because the catalog would outgrow its bound; the message names the sizes and what to do. */
export class ToolCatalogBoundError extends ToolRegistryError {
  override name = 'ToolCatalogBoundError';
}

const specBytes = (spec: ToolSpec) => Buffer.byteLength(JSON.stringify(spec));

/**
 * The worker's registered tools (built-ins, the tools folder's modules, MCP servers' tools), by name, and the grants of
 * a turn in which no skill is active. Built at worker start-up; MCP tools of a server that was down then are added
 * when it answers (new turns see them; a running turn keeps the list it started with). The catalog, the JSON of every
 * spec, stays within `maxCatalogBytes`: tools that would take it past are refused, all of a source's at once.
 */
export class ToolRegistry {
  private readonly tools = new Map<string, RegisteredTool>();
  private readonly headers = new Map<string, ToolHeader>();
  private bytes = 0;

  constructor(
    tools: RegisteredTool[] = [],
    readonly rootGrants: string[] = [],
    readonly maxCatalogBytes = defaultMaxToolCatalogBytes,
  ) {
    this.add(tools, "The built-in tools and the tools folder's modules");
  }

  /** The catalog's size: the bytes of the JSON of every spec. */
  get catalogBytes(): number {
    return this.bytes;
  }

  /** Registers tools, all or none; `from` names where they come from in the error when the catalog would outgrow its bound. */
  add(tools: RegisteredTool[], from = 'These tools'): void {
    const batch = new Map<string, RegisteredTool>();
    for (const tool of tools) {
      const existing = this.tools.get(tool.spec.name) ?? batch.get(tool.spec.name);
      if (existing) {
        throw new ToolRegistryError(
          `Two tools are named ${tool.spec.name} (${describeSource(existing.spec)} and ${describeSource(tool.spec)}); rename one.`,
        );
      }
      batch.set(tool.spec.name, tool);
    }
    const adding = tools.reduce((sum, tool) => sum + specBytes(tool.spec), 0);
    if (this.bytes + adding > this.maxCatalogBytes) {
      throw new ToolCatalogBoundError(
        `${from}: ${tools.length} tools of ${sizeOf(adding)} (the JSON of their specs) would make the tool catalog ${sizeOf(this.bytes + adding)} ` +
          `with the ${sizeOf(this.bytes)} registered before, over its bound of ${sizeOf(this.maxCatalogBytes)} (SKILLFLOW_TOOL_CATALOG_MAX_BYTES); none of them is registered. ` +
          `Offer fewer tools or shorter descriptions and input schemas, or raise SKILLFLOW_TOOL_CATALOG_MAX_BYTES (at most ${sizeOf(maxToolCatalogBytesLimit)}).`,
      );
    }
    for (const tool of tools) {
      this.tools.set(tool.spec.name, tool);
      this.headers.set(tool.spec.name, headerOf(tool.spec));
    }
    this.bytes += adding;
  }

  get(name: string): RegisteredTool | undefined {
    return this.tools.get(name);
  }

  get specs(): ToolSpec[] {
    return [...this.tools.values()].map((tool) => tool.spec);
  }

  /** What a turn of code before separatePatches.toolCatalogByReference reads when it starts: plain data. */
  catalog(): ToolCatalog {
    return { tools: this.specs, rootGrants: [...this.rootGrants] };
  }

  /** What a turn reads when it starts: every tool's header, its detail named by digest. */
  catalogReference(): ToolCatalogReference {
    return { headers: [...this.headers.values()], rootGrants: [...this.rootGrants] };
  }

  /** A tool's detail, when this worker offers the tool with the detail of that digest. */
  detail(name: string, digest: string): ToolDetail | undefined {
    const spec = this.headers.get(name)?.detail === digest ? this.tools.get(name)?.spec : undefined;
    return spec && { description: spec.description, inputSchema: spec.inputSchema };
  }

  /**
   * Runs one call. A ToolError, an unknown tool and a tool's own error output are results the model sees; any other
   * error is thrown, for the activity's retry policy (the turn turns the last one into an error result).
   */
  async run(input: ToolRunInput, context: Omit<ToolContext, 'callId' | 'idempotencyKey'>): Promise<ToolRunResult> {
    const tool = this.tools.get(input.name);
    if (!tool) {
      return {
        isError: true,
        content: `Tool ${input.name} is not registered on the worker that ran this call; the workers of this task queue must all offer the same tools.`,
      };
    }
    try {
      const output = await tool.run(input.input, {
        ...context,
        callId: input.callId,
        ...(input.idempotencyKey ? { idempotencyKey: input.idempotencyKey } : {}),
      });
      const result =
        typeof output === 'string'
          ? { content: output, isError: false }
          : { content: String(output.content), isError: output.isError === true };
      return capped(result);
    } catch (err) {
      if (err instanceof ToolError) return capped({ content: err.message, isError: true });
      throw err;
    }
  }
}

function capped(result: ToolRunResult): ToolRunResult {
  if (result.content.length <= maxToolResultChars) return result;
  return {
    ...result,
    content: `${result.content.slice(0, maxToolResultChars)}\n\n[truncated: the result had ${result.content.length} characters; the first ${maxToolResultChars} are shown]`,
  };
}

function describeSource(spec: ToolSpec): string {
  return spec.source === 'mcp' ? `MCP server ${spec.server}` : `a ${spec.source} tool`;
}
