import type { ToolCatalog, ToolRunInput, ToolRunResult, ToolSpec } from '../../core/tools';
import { ToolError, type RegisteredTool, type ToolContext } from './define-tool';

/** The longest tool result kept (characters): it travels in workflow history, under Temporal's 2 MiB payload limit. */
export const maxToolResultChars = 200_000;

export class ToolRegistryError extends Error {
  override name = 'ToolRegistryError';
}

/**
 * The worker's registered tools (built-ins, the tools folder's modules, MCP servers' tools), by name, and the grants of
 * a turn in which no skill is active. Built at worker start-up; MCP tools of a server that was down then are added
 * when it answers (new turns see them; a running turn keeps the list it started with).
 */
export class ToolRegistry {
  private readonly tools = new Map<string, RegisteredTool>();

  constructor(
    tools: RegisteredTool[] = [],
    readonly rootGrants: string[] = [],
  ) {
    this.add(tools);
  }

  add(tools: RegisteredTool[]): void {
    for (const tool of tools) {
      const existing = this.tools.get(tool.spec.name);
      if (existing) {
        throw new ToolRegistryError(`Two tools are named ${tool.spec.name} (${describeSource(existing.spec)} and ${describeSource(tool.spec)}); rename one.`);
      }
      this.tools.set(tool.spec.name, tool);
    }
  }

  get(name: string): RegisteredTool | undefined {
    return this.tools.get(name);
  }

  get specs(): ToolSpec[] {
    return [...this.tools.values()].map((tool) => tool.spec);
  }

  /** What a turn reads when it starts: plain data. */
  catalog(): ToolCatalog {
    return { tools: this.specs, rootGrants: [...this.rootGrants] };
  }

  /**
   * Runs one call. A ToolError, an unknown tool and a tool's own error output are results the model sees; any other
   * error is thrown, for the activity's retry policy (the turn turns the last one into an error result).
   */
  async run(input: ToolRunInput, context: Omit<ToolContext, 'callId' | 'idempotencyKey'>): Promise<ToolRunResult> {
    const tool = this.tools.get(input.name);
    if (!tool) {
      return { isError: true, content: `Tool ${input.name} is not registered on the worker that ran this call; the workers of this task queue must all offer the same tools.` };
    }
    try {
      const output = await tool.run(input.input, { ...context, callId: input.callId, ...(input.idempotencyKey ? { idempotencyKey: input.idempotencyKey } : {}) });
      const result = typeof output === 'string' ? { content: output, isError: false } : { content: String(output.content), isError: output.isError === true };
      return capped(result);
    } catch (err) {
      if (err instanceof ToolError) return capped({ content: err.message, isError: true });
      throw err;
    }
  }
}

function capped(result: ToolRunResult): ToolRunResult {
  if (result.content.length <= maxToolResultChars) return result;
  return { ...result, content: `${result.content.slice(0, maxToolResultChars)}\n\n[truncated: the result had ${result.content.length} characters; the first ${maxToolResultChars} are shown]` };
}

function describeSource(spec: ToolSpec): string {
  return spec.source === 'mcp' ? `MCP server ${spec.server}` : `a ${spec.source} tool`;
}
