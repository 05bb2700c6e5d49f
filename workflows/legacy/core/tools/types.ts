import type { JsonSchema } from '../json-validator';

/**
 * Tools as plain data. A tool is described once, by a `ToolSpec`: what the model sees (name, description, input
 * schema), what scoping reads (category, source), and how it runs. Engine tools run in workflow code; every other tool
 * runs in an activity of the worker that registered it (docs/tools.md). Specs cross the activity boundary unchanged:
 * a turn reads the worker's tool catalog once, when it starts, and keeps that list for its whole life.
 */

/** Who provides a tool: the engine itself, a built-in module, a module of the tools folder, or an MCP server. */
export const toolSources = ['engine', 'builtin', 'custom', 'mcp'] as const;
export type ToolSource = (typeof toolSources)[number];

/** Where a call's work happens: a wait or a lookup in workflow code, a child workflow, or an activity. */
export type ToolRunsIn = 'workflow' | 'child-workflow' | 'activity';

/** A tool's input schema: a JSON Schema object, in the subset core/json-validator.ts enforces (MCP tools may use more). */
export type ToolInputSchema = JsonSchema & { type: 'object' };

/** How the activity of a registered tool runs: its own timeout, retries and heartbeat. */
export interface ToolActivityOptions {
  /** Start-to-close timeout of one attempt. */
  timeoutMs: number;
  /** Heartbeat timeout for long tools (the activity heartbeats at a third of it); null: no heartbeat. */
  heartbeatMs: number | null;
  /** Attempts, the first included. */
  maxAttempts: number;
  /** Delay before the first retry (doubling after that). */
  retryInitialMs: number;
}

export interface ToolSpec {
  /** `^[a-zA-Z0-9_-]{1,64}$`, unique in the registry. */
  name: string;
  description: string;
  /** A lowercase word (search, web, data, math, ...): skills may grant a whole category with `category:NAME`. */
  category: string;
  inputSchema: ToolInputSchema;
  source: ToolSource;
  /** The MCP server a tool comes from (source `mcp`), as named in the MCP configuration. */
  server?: string;
  runsIn: ToolRunsIn;
  /** Whether running it twice with the same input does no more than running it once. */
  idempotent: boolean;
  /** Whether a human must approve each call (and may edit its input) before it runs. */
  needsApproval: boolean;
  /** Registered tools only: how their activity runs. */
  activity?: ToolActivityOptions;
}

/** What a worker offers: its registered tools, and the grants of a turn in which no skill is active. */
export interface ToolCatalog {
  tools: ToolSpec[];
  /** SKILLFLOW_DEFAULT_TOOLS, as grants (tool names, `category:NAME`, `mcp:SERVER`). */
  rootGrants: string[];
}

export const emptyToolCatalog: ToolCatalog = { tools: [], rootGrants: [] };

/** What the model reads of a tool, and the policy checks its input against: the bulk of a spec. */
export interface ToolDetail {
  description: string;
  inputSchema: ToolInputSchema;
}

/**
 * A registered tool without its detail, which stays on the workers: what a run needs to scope, name and run it, and
 * the digest of its detail (`digestOf` of `{description, inputSchema}`), by which the run reads the detail back once a
 * skill grants the tool (the readToolDetails activity).
 */
export type ToolHeader = Omit<ToolSpec, keyof ToolDetail> & { detail: string };

/**
 * The worker's catalog as a run of separatePatches.toolCatalogByReference reads it when it starts (and hands its skill
 * runs): every tool's header, and the root turn's grants. Workflow history holds these, and the detail of the tools a
 * skill granted, instead of every tool's whole spec.
 */
export interface ToolCatalogReference {
  headers: ToolHeader[];
  rootGrants: string[];
}

/** What a run asks for when a skill grants tools whose detail it lacks: each by name and the digest of its detail. */
export interface ToolDetailsRequest {
  tools: Array<Pick<ToolHeader, 'name' | 'detail'>>;
}

/** One call of a registered tool, as its activity receives it. */
export interface ToolRunInput {
  name: string;
  /** Validated against the tool's input schema, with its defaults filled in. */
  input: Record<string, unknown>;
  /** The model's tool_use id. */
  callId: string;
  /** Non-idempotent tools: the same for every attempt of this call (workflow id and call id). */
  idempotencyKey?: string;
}

/** What the model gets back: text, and whether it is an error. */
export interface ToolRunResult {
  content: string;
  isError: boolean;
}
