import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isPlainObject } from '../../../core/json-validator';
import { mcpToolName, type ToolInputSchema, type ToolRunResult, type ToolSpec } from '../../../core/tools';
import { registeredTool, type RegisteredTool, type ToolContext } from '../define-tool';
import type { McpServerConfig } from './config';

/** The key a non-idempotent call's idempotency key travels under, in the request's `_meta`. */
export const idempotencyMetaKey = 'skillflow/idempotency-key';
const maxDescriptionChars = 4096;
const maxSchemaChars = 32_768;
/** Time to connect (spawn and initialize, or the first HTTP exchange) before a server counts as down. */
const connectTimeoutMs = 10_000;

interface McpTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: unknown;
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean };
}

class Deadline extends Error {}

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Deadline()), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

const codeOf = (err: unknown): string | undefined => {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(code) ? code : undefined;
};

const reason = (err: unknown) => (err instanceof Error ? err.message || err.name : String(err)).split('\n')[0];

/**
 * One configured MCP server: a client connected on demand (at start-up, and again after the connection drops), its
 * tools as registered tools, and calls bounded by the server's timeout. Every failure is a result the model sees.
 */
export class McpServerConnection {
  private client: Client | null = null;
  private connecting: Promise<Client> | null = null;
  private closed = false;

  constructor(readonly config: McpServerConfig) {}

  private transport(): Transport {
    const { config } = this;
    if (config.transport === 'stdio') {
      return new StdioClientTransport({ command: config.command, args: config.args, env: { ...getDefaultEnvironment(), ...config.env }, ...(config.cwd ? { cwd: config.cwd } : {}), stderr: 'ignore' });
    }
    if (config.transport === 'sse') return new SSEClientTransport(new URL(config.url), { requestInit: { headers: config.headers } });
    return new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers } });
  }

  /** The connected client, connecting first when there is none. */
  private connected(): Promise<Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= (async () => {
      const client = new Client({ name: 'skillflow', version: '1' });
      const transport = this.transport();
      try {
        await within(client.connect(transport), connectTimeoutMs);
      } catch (err) {
        await client.close().catch(() => undefined);
        throw err instanceof Deadline ? new Error(`no answer within ${connectTimeoutMs / 1000} s`) : err;
      }
      transport.onclose = () => {
        if (this.client === client) this.client = null;
      };
      if (this.closed) await client.close();
      this.client = client;
      return client;
    })().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  /** The server's tools, as registered tools named SERVER__TOOL. */
  async discover(): Promise<{ tools: RegisteredTool[]; skipped: string[] }> {
    const client = await this.connected();
    const listed: McpTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await within(client.listTools(cursor ? { cursor } : undefined), this.config.timeoutMs);
      listed.push(...(page.tools as McpTool[]));
      cursor = page.nextCursor;
    } while (cursor);
    const tools: RegisteredTool[] = [];
    const skipped: string[] = [];
    for (const tool of listed) {
      const schema = tool.inputSchema;
      if (!isPlainObject(schema) || schema.type !== 'object' || JSON.stringify(schema).length > maxSchemaChars) {
        skipped.push(`${tool.name} (its input schema is not an object schema of at most ${maxSchemaChars} characters)`);
        continue;
      }
      tools.push(this.registered(tool, schema as unknown as ToolInputSchema));
    }
    return { tools, skipped };
  }

  private registered(tool: McpTool, inputSchema: ToolInputSchema): RegisteredTool {
    const { config } = this;
    const hints = tool.annotations ?? {};
    const readOnly = hints.readOnlyHint === true;
    const destructive = !readOnly && hints.destructiveHint !== false;
    const idempotent = readOnly || hints.idempotentHint === true;
    const needsApproval = config.approval === 'always' || (config.approval === 'destructive' && destructive);
    const { $schema: _ignored, ...schema } = inputSchema as ToolInputSchema & { $schema?: unknown };
    const spec: ToolSpec = {
      name: mcpToolName(config.name, tool.name),
      description: (tool.description || tool.title || `The ${tool.name} tool of MCP server ${config.name}.`).slice(0, maxDescriptionChars),
      category: config.category,
      inputSchema: schema as ToolInputSchema,
      source: 'mcp',
      server: config.name,
      runsIn: 'activity',
      idempotent,
      needsApproval,
      // The call bounds itself (the server's timeout); the activity's own limit only catches a worker that died.
      activity: { timeoutMs: config.timeoutMs + 10_000, heartbeatMs: config.timeoutMs > 20_000 ? 20_000 : null, maxAttempts: 1, retryInitialMs: 1_000 },
    };
    return registeredTool(spec, (input, context) => this.call(tool.name, input, context));
  }

  /** One call: an error result when the server is down (at once), fails, or does not answer within its timeout. */
  async call(tool: string, input: Record<string, unknown>, context: ToolContext): Promise<ToolRunResult> {
    const { name, timeoutMs } = this.config;
    const started = Date.now();
    let client: Client;
    try {
      client = await within(this.connected(), timeoutMs);
    } catch (err) {
      // The reason without its text (a spawn error names paths of the worker's machine): the code, or the deadline.
      return { isError: true, content: `MCP server ${name} is down: ${err instanceof Deadline ? `no connection within ${timeoutMs} ms` : (connectionFailure(err) ?? codeOf(err) ?? 'it cannot be reached')}. ${tool} did not run.` };
    }
    const meta = context.idempotencyKey ? { _meta: { [idempotencyMetaKey]: context.idempotencyKey } } : {};
    const left = Math.max(1, timeoutMs - (Date.now() - started));
    try {
      const result = await within(client.callTool({ name: tool, arguments: input, ...meta }, undefined, { timeout: left, signal: context.signal }), left + 500);
      return resultText(result as CallResult);
    } catch (err) {
      if (err instanceof Deadline || /timed out|timeout/i.test(reason(err))) {
        return { isError: true, content: `MCP server ${name} did not answer ${tool} within ${timeoutMs} ms; it may still be running it.` };
      }
      const unreachable = connectionFailure(err);
      if (unreachable || !this.client) {
        await this.drop(client);
        return { isError: true, content: `MCP server ${name} is down: ${unreachable ?? codeOf(err) ?? 'the connection failed'}. ${tool} did not run, or its answer was lost.` };
      }
      // Arguments the server refused: its message is for the caller, who can fix them.
      if ((err as { code?: unknown }).code === ErrorCode.InvalidParams) return { isError: true, content: `MCP server ${name} refused ${tool}: ${reason(err)}` };
      // Anything else is the server's internals: thrown, so the turn shows the generic internal error and logs this one.
      throw err;
    }
  }

  /** Forgets a client whose connection failed, so the next call connects again. */
  private async drop(client: Client): Promise<void> {
    if (this.client !== client) return;
    this.client = null;
    await client.close().catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = null;
    await client?.close().catch(() => undefined);
  }
}

const connectionCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT']);

/** The connection error behind a failed call (a refused or reset connection, a closed stdio pipe), or null. */
function connectionFailure(err: unknown): string | null {
  for (let cause: unknown = err, depth = 0; cause && depth < 6; cause = (cause as { cause?: unknown }).cause, depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && connectionCodes.has(code)) return code;
    const message = cause instanceof Error ? cause.message : '';
    if (/Connection closed|Not connected|fetch failed/i.test(message)) return message.replace(/^\w*Error: /, '');
  }
  return null;
}

interface CallResult {
  content?: Array<{ type: string; text?: string; mimeType?: string; resource?: { uri?: string; text?: string } }>;
  structuredContent?: unknown;
  isError?: boolean;
}

/** The model reads text: text blocks as they are, embedded text resources by their text, anything else named. */
function resultText(result: CallResult): ToolRunResult {
  const parts = (result.content ?? []).map((block) => {
    if (block.type === 'text') return block.text ?? '';
    if (block.type === 'resource' && typeof block.resource?.text === 'string') return block.resource.text;
    return `[${block.type}${block.mimeType ? ` ${block.mimeType}` : ''}${block.resource?.uri ? ` ${block.resource.uri}` : ''} not shown]`;
  });
  if (parts.length === 0 && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  return { content: parts.join('\n'), isError: result.isError === true };
}
