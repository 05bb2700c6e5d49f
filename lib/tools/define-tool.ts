import { Type, type Static, type TObject, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { unsupportedKeywords, type JsonSchema } from '../../core/json-validator';
import { parseDuration } from '../../core/skills/durations';
import {
  isCategoryName,
  isToolName,
  type ToolActivityOptions,
  type ToolInputSchema,
  type ToolSpec,
} from '../../core/tools';

/**
 * `defineTool`: one small module per tool. Its TypeBox input schema is the one definition of the input: the JSON Schema
 * the model sees, what core/json-validator.ts checks before the tool runs, and the TypeScript type of `run`'s input.
 * docs/tools.md has a worked example.
 */
export { Type };
export type { Static };

/** A string that is one of these values (TypeBox's own unions become anyOf, which the validator does not read). */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: { description?: string; default?: T[number] } = {},
): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** What a tool's `run` gets besides its input. */
export interface ToolContext {
  /** The model's tool_use id. */
  callId: string;
  /** Set for tools that are not idempotent: the same for every attempt of this call; pass it on to the service. */
  idempotencyKey?: string;
  /** The activity attempt, from 1. */
  attempt: number;
  /**
   * Aborted when the attempt times out or the worker shuts down, and, when the tool declares `heartbeat`, when the turn
   * is cancelled (Temporal tells an activity of a cancel only through its heartbeats).
   */
  signal: AbortSignal;
  /** Records progress; the activity heartbeats on its own while `run` is pending. */
  heartbeat(details?: unknown): void;
}

/** Text for the model, or text marked as an error. */
export type ToolOutput = string | { content: string; isError?: boolean };

/** A failure the model should see as an is_error result, as is: never retried. Any other error is retried. */
export class ToolError extends Error {
  override name = 'ToolError';
}

export interface ToolDefinitionOptions<S extends TObject> {
  name: string;
  /** What the tool does and when to use it: the model reads it. */
  description: string;
  /** A lowercase word: skills may grant the whole category (`category:NAME`). */
  category: string;
  input: S;
  /** Whether running it twice with the same input does no more than once. Non-idempotent tools get an idempotency key. */
  idempotent: boolean;
  /** Whether each call waits for a human's approval (who may edit the input) before it runs. Default false. */
  needsApproval?: boolean;
  /** One attempt's time limit: a duration (`30s`) or milliseconds. Default 30s. */
  timeout?: string | number;
  /** For long tools: the heartbeat timeout (the activity heartbeats at a third of it). Default: none. */
  heartbeat?: string | number;
  /** Attempts including the first (default 3 for idempotent tools, 1 otherwise) and the first retry delay (default 1s). */
  retry?: { maximumAttempts?: number; initialInterval?: string | number };
  run(input: Static<S>, context: ToolContext): Promise<ToolOutput> | ToolOutput;
}

const toolBrand = Symbol.for('skillflow.tool');

/** A tool as the registry holds it: its spec (plain data) and its implementation. */
export interface RegisteredTool {
  readonly [toolBrand]: true;
  spec: ToolSpec;
  run(input: Record<string, unknown>, context: ToolContext): Promise<ToolOutput> | ToolOutput;
}

export class ToolDefinitionError extends Error {
  override name = 'ToolDefinitionError';
}

/** A registered tool from a spec built elsewhere (an MCP server's tool). */
export function registeredTool(spec: ToolSpec, run: RegisteredTool['run']): RegisteredTool {
  return { [toolBrand]: true, spec, run };
}

export function isRegisteredTool(value: unknown): value is RegisteredTool {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[toolBrand] === true;
}

function durationMs(
  value: string | number | undefined,
  fallback: number | null,
  what: string,
  tool: string,
): number | null {
  if (value === undefined) return fallback;
  const ms = typeof value === 'number' ? value : parseDuration(value);
  if (ms === null || !Number.isSafeInteger(ms) || ms <= 0)
    throw new ToolDefinitionError(
      `Tool ${tool}: ${what} ${JSON.stringify(value)} is not a duration such as "30s" or a positive number of milliseconds.`,
    );
  return ms;
}

/** The JSON Schema of a TypeBox schema: its plain keywords (TypeBox's own markers are symbols and drop out). */
export function plainSchema(schema: TSchema): JsonSchema {
  return JSON.parse(JSON.stringify(schema)) as JsonSchema;
}

/** Checks a tool module's definition and returns it as a registered tool; throws ToolDefinitionError naming what is wrong. */
export function defineTool<S extends TObject>(options: ToolDefinitionOptions<S>): RegisteredTool {
  const { name } = options;
  if (!isToolName(name))
    throw new ToolDefinitionError(`Tool name ${JSON.stringify(name)} must be 1-64 letters, digits, _ and -.`);
  if (typeof options.description !== 'string' || options.description.trim() === '')
    throw new ToolDefinitionError(`Tool ${name}: the description is empty; say what it does and when to use it.`);
  if (!isCategoryName(options.category))
    throw new ToolDefinitionError(
      `Tool ${name}: category ${JSON.stringify(options.category)} must be a lowercase word (a-z, 0-9, _ and -).`,
    );
  if (typeof options.idempotent !== 'boolean')
    throw new ToolDefinitionError(`Tool ${name}: say whether it is idempotent (idempotent: true or false).`);
  const inputSchema = plainSchema(options.input);
  if (inputSchema.type !== 'object') throw new ToolDefinitionError(`Tool ${name}: the input must be Type.Object(...).`);
  const ignored = unsupportedKeywords(inputSchema);
  if (ignored.length > 0) {
    throw new ToolDefinitionError(
      `Tool ${name}: the input schema uses keywords the validator does not enforce (${ignored.join(', ')}); use type, properties, ` +
        'required, additionalProperties, enum (StringEnum), minimum, maximum, minLength, maxLength, minItems, maxItems, items, default and description.',
    );
  }
  const attempts = options.retry?.maximumAttempts ?? (options.idempotent ? 3 : 1);
  if (!Number.isInteger(attempts) || attempts < 1 || attempts > 100)
    throw new ToolDefinitionError(`Tool ${name}: retry.maximumAttempts must be a whole number from 1 to 100.`);
  const activity: ToolActivityOptions = {
    timeoutMs: durationMs(options.timeout, 30_000, 'timeout', name)!,
    heartbeatMs: durationMs(options.heartbeat, null, 'heartbeat', name),
    maxAttempts: attempts,
    retryInitialMs: durationMs(options.retry?.initialInterval, 1_000, 'retry.initialInterval', name)!,
  };
  const spec: ToolSpec = {
    name,
    description: options.description.trim(),
    category: options.category,
    inputSchema: inputSchema as ToolInputSchema,
    source: 'builtin',
    runsIn: 'activity',
    idempotent: options.idempotent,
    needsApproval: options.needsApproval ?? false,
    activity,
  };
  return { [toolBrand]: true, spec, run: options.run as RegisteredTool['run'] };
}
