import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isPlainObject } from '../../../core/json-validator';
import { mcpToolName, type ToolInputSchema, type ToolRunResult, type ToolSpec } from '../../../core/tools';
import { registeredTool, type RegisteredTool, type ToolContext } from '../define-tool';
import type { McpServerConfig } from './config';
import { describeExit, ServerProcessTransport } from './server-process';

/** The key a non-idempotent call's idempotency key travels under, in the request's `_meta`. */
export const idempotencyMetaKey = 'skillflow/idempotency-key';
const maxDescriptionChars = 4096;
const maxSchemaChars = 32_768;
/** Time to connect (spawn and initialize, or the first HTTP exchange) before a server counts as down. */
const connectTimeoutMs = 10_000;
/** Pages of `tools/list` read at most: a server that keeps offering a next page cannot hold discovery forever. */
export const maxToolPages = 50;

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

const reasonOf = (err: unknown): string =>
  (err instanceof Error ? err.message || err.name : String(err)).split('\n')[0];

const unreachable = 'it cannot be reached';

/**
 * A server that cannot be reached. `reason` is for the model: a code, how its process ended, or a deadline, never an
 * error's text (a spawn error names paths of the worker's machine); the message, for the worker's log, adds the text.
 */
class ServerDown extends Error {
  override name = 'ServerDown';
  constructor(
    readonly reason: string,
    cause: unknown,
  ) {
    super(cause instanceof Deadline ? reason : `${reason}: ${reasonOf(cause)}`, { cause });
  }
}

/** A client and its transport; `closed` is set when the connection closes (the client then fails its calls in flight). */
interface Link {
  client: Client;
  transport: Transport;
  closed: boolean;
}

/**
 * One configured MCP server: a client connected on demand (at start-up, and again after the connection drops), its
 * tools as registered tools, and calls bounded by the server's timeout. Every failure is a result the model sees.
 */
export class McpServerConnection {
  private link: Link | null = null;
  private connecting: Promise<Link> | null = null;
  private closed = false;

  constructor(readonly config: McpServerConfig) {}

  private transport(): Transport {
    const { config } = this;
    if (config.transport === 'stdio') {
      return new ServerProcessTransport({
        command: config.command,
        args: config.args,
        env: { ...getDefaultEnvironment(), ...config.env },
        ...(config.cwd ? { cwd: config.cwd } : {}),
      });
    }
    if (config.transport === 'sse')
      return new SSEClientTransport(new URL(config.url), { requestInit: { headers: config.headers } });
    return new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers } });
  }

  /** The connected client, connecting first when there is none; a failure to connect is a ServerDown. */
  private connected(): Promise<Link> {
    if (this.link) return Promise.resolve(this.link);
    this.connecting ??= (async () => {
      const link: Link = {
        client: new Client({ name: 'skillflow', version: '1' }),
        transport: this.transport(),
        closed: false,
      };
      // The client's own handler (kept) fails the calls in flight with ConnectionClosed; this one forgets the link.
      link.client.onclose = () => {
        link.closed = true;
        if (this.link === link) this.link = null;
      };
      try {
        await within(link.client.connect(link.transport), connectTimeoutMs);
      } catch (err) {
        await link.client.close().catch(() => undefined);
        throw new ServerDown(
          err instanceof Deadline
            ? `no answer within ${connectTimeoutMs / 1000} s`
            : (downReason(err, link) ?? codeOf(err) ?? unreachable),
          err,
        );
      }
      if (this.closed) await link.client.close();
      else if (!link.closed) this.link = link;
      return link;
    })().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  /** The server's tools, as registered tools named SERVER__TOOL; at most `maxToolPages` pages of its list are read. */
  async discover(): Promise<{ tools: RegisteredTool[]; skipped: string[] }> {
    const { client } = await this.connected();
    const listed: McpTool[] = [];
    const skipped: string[] = [];
    let cursor: string | undefined;
    for (let pages = 1; ; pages++) {
      const page = await within(client.listTools(cursor ? { cursor } : undefined), this.config.timeoutMs);
      listed.push(...(page.tools as McpTool[]));
      cursor = page.nextCursor;
      if (!cursor) break;
      if (pages === maxToolPages) {
        skipped.push(
          `the tools after page ${maxToolPages} of its list (the server offers more pages; ${maxToolPages} are read)`,
        );
        break;
      }
    }
    const tools: RegisteredTool[] = [];
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
      description: (tool.description || tool.title || `The ${tool.name} tool of MCP server ${config.name}.`).slice(
        0,
        maxDescriptionChars,
      ),
      category: config.category,
      inputSchema: schema as ToolInputSchema,
      source: 'mcp',
      server: config.name,
      runsIn: 'activity',
      idempotent,
      needsApproval,
      // The call bounds itself (the server's timeout); the activity's own limit only catches a worker that died.
      activity: {
        timeoutMs: config.timeoutMs + 10_000,
        heartbeatMs: config.timeoutMs > 20_000 ? 20_000 : null,
        maxAttempts: 1,
        retryInitialMs: 1_000,
      },
    };
    return registeredTool(spec, (input, context) => this.call(tool.name, input, context));
  }

  /** One call: an error result when the server is down (at once), fails, or does not answer within its timeout. */
  async call(tool: string, input: Record<string, unknown>, context: ToolContext): Promise<ToolRunResult> {
    const { name, timeoutMs } = this.config;
    const started = Date.now();
    let link: Link;
    try {
      link = await within(this.connected(), timeoutMs);
    } catch (err) {
      return {
        isError: true,
        content: `MCP server ${name} is down: ${err instanceof Deadline ? `no connection within ${timeoutMs} ms` : err instanceof ServerDown ? err.reason : unreachable}. ${tool} did not run.`,
      };
    }
    const meta = context.idempotencyKey ? { _meta: { [idempotencyMetaKey]: context.idempotencyKey } } : {};
    const left = Math.max(1, timeoutMs - (Date.now() - started));
    try {
      const result = await within(
        link.client.callTool({ name: tool, arguments: input, ...meta }, undefined, {
          timeout: left,
          signal: context.signal,
        }),
        left + 500,
      );
      return resultText(result as CallResult);
    } catch (err) {
      const down = downReason(err, link);
      if (down) {
        await this.drop(link);
        return {
          isError: true,
          content: `MCP server ${name} is down: ${down}. ${tool} did not run, or its answer was lost.`,
        };
      }
      if (err instanceof Deadline || /timed out|timeout/i.test(reasonOf(err))) {
        return {
          isError: true,
          content: `MCP server ${name} did not answer ${tool} within ${timeoutMs} ms; it may still be running it.`,
        };
      }
      // Arguments the server refused: its message is for the caller, who can fix them.
      if ((err as { code?: unknown }).code === ErrorCode.InvalidParams)
        return { isError: true, content: `MCP server ${name} refused ${tool}: ${reasonOf(err)}` };
      // Anything else is the server's internals: thrown, so the turn shows the generic internal error and logs this one.
      throw err;
    }
  }

  /** Forgets a link whose connection failed, so the next call connects again. */
  private async drop(link: Link): Promise<void> {
    if (this.link === link) this.link = null;
    await link.client.close().catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    const link = this.link;
    this.link = null;
    await link?.client.close().catch(() => undefined);
  }
}

/** Codes of a connection that failed (refused, reset, a name not found, a closed pipe) rather than of a server's answer. */
const connectionCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * Why a failed call means the server is down, named without the error's text, or null when it is not down. Down is
 * a connection that closed (the server's process ended: how; a connection the client closed) or a transport error
 * with a connection code anywhere in its causes. The text of an error is never read: a server's own errors can say
 * anything ("fetch failed: password=..."), and they leave the server up.
 */
function downReason(err: unknown, link: Link): string | null {
  for (let cause: unknown = err, depth = 0; cause && depth < 6; cause = (cause as { cause?: unknown }).cause, depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && connectionCodes.has(code)) return code;
  }
  if (!link.closed) return null;
  const exit = link.transport instanceof ServerProcessTransport ? link.transport.exit : null;
  return exit ? describeExit(exit) : 'its connection closed';
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
  if (parts.length === 0 && result.structuredContent !== undefined)
    parts.push(JSON.stringify(result.structuredContent));
  return { content: parts.join('\n'), isError: result.isError === true };
}
