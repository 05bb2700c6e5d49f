import { ApplicationFailure, Context } from '@temporalio/activity';
import type {
  ToolCatalog,
  ToolCatalogReference,
  ToolDetail,
  ToolDetailsRequest,
  ToolRunInput,
  ToolRunResult,
} from '../core/tools';
import { deadlineSignal } from '../lib/deadline-signal';
import type { ToolRegistry } from '../lib/tools/registry';

/** The failure type of a tool detail the worker that ran readToolDetails does not hold (retried: another may). */
export const toolDetailMissType = 'ToolDetailMiss';

export interface ToolActivityDeps {
  registry: ToolRegistry;
}

/**
 * The tool activities: a turn reads the catalog once when it starts, and runs each allowed call of a registered tool
 * through runTool, with the tool's own timeout, retries and heartbeat (workflows/registered-tools.ts).
 */
export function createToolActivities(deps: ToolActivityDeps) {
  const { registry } = deps;
  return {
    /** The registered tools (specs, plain data) and the root turn's grants. */
    async toolCatalog(): Promise<ToolCatalog> {
      return registry.catalog();
    },
    /** Every tool's header, its detail named by digest (runs of separatePatches.toolCatalogByReference). */
    async toolCatalogReference(): Promise<ToolCatalogReference> {
      return registry.catalogReference();
    },
    /**
     * The detail of the tools a skill granted a run, checked against the digests its headers name. A tool this worker
     * does not offer with that detail (the workers of the task queue offer different tools, or an MCP server changed its
     * tools between their starts) fails the attempt; another worker may hold it.
     */
    async readToolDetails(request: ToolDetailsRequest): Promise<ToolDetail[]> {
      return request.tools.map(({ name, detail }) => {
        const found = registry.detail(name, detail);
        if (found) return found;
        throw ApplicationFailure.create({
          type: toolDetailMissType,
          message: `This worker does not offer tool ${name} with the definition the run read when it started (detail ${detail}); the workers of a task queue must all offer the same tools.`,
        });
      });
    },
    /**
     * One call of a registered tool; heartbeats on its own when the tool declares a heartbeat. The tool's signal aborts
     * when its attempt's time is up, here on the worker: Temporal times the attempt out on the server and tells the
     * worker only through a heartbeat, so a tool that does not heartbeat would otherwise run on after its timeout.
     */
    async runTool(input: ToolRunInput): Promise<ToolRunResult> {
      const context = Context.current();
      const heartbeatMs = registry.get(input.name)?.spec.activity?.heartbeatMs ?? null;
      const beating = heartbeatMs
        ? setInterval(() => context.heartbeat(), Math.max(100, Math.floor(heartbeatMs / 3)))
        : undefined;
      const timeUp = deadlineSignal(context.info.startToCloseTimeoutMs, [context.cancellationSignal]);
      try {
        return await registry.run(input, {
          attempt: context.info.attempt,
          signal: timeUp.signal,
          heartbeat: (details) => context.heartbeat(details),
        });
      } finally {
        timeUp.clear();
        clearInterval(beating);
      }
    },
  };
}

export type ToolActivities = ReturnType<typeof createToolActivities>;
