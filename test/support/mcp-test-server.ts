import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { manyToolMark } from './many-tools';

/**
 * A small MCP server for the tests, on any transport: `stdio`, or `http PORT [TOKEN]` (streamable HTTP, stateless, at
 * /mcp; and the older HTTP+SSE transport at /sse, posting to /messages; prints `listening PORT` once it listens; with a
 * TOKEN, a request without `Authorization: Bearer TOKEN` gets 401). Tools: echo (read-only; its answer starts with the
 * environment's MCP_TEST_ECHO_PREFIX), slow (waits), record (not idempotent: answers with the idempotency key it was
 * given), and dotted.name (a name that needs namespacing); or, on stdio with MCP_TEST_MANY, many large tools
 * (createManyServer).
 *
 * `faulty`: a server that misbehaves, on stdio (see faultyServer).
 */
function createServer(): McpServer {
  const server = new McpServer({ name: 'skillflow-test', version: '1.0.0' });
  server.registerTool(
    'echo',
    {
      description: 'Echo the text back.',
      inputSchema: { text: z.string().max(100) },
      annotations: { readOnlyHint: true },
    },
    async ({ text }) => ({
      content: [{ type: 'text', text: `${process.env.MCP_TEST_ECHO_PREFIX ?? ''}echo: ${text}` }],
    }),
  );
  server.registerTool(
    'slow',
    {
      description: 'Answer after a while.',
      inputSchema: { ms: z.number().int().min(0) },
      annotations: { readOnlyHint: true },
    },
    async ({ ms }) => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return { content: [{ type: 'text', text: `slept ${ms} ms` }] };
    },
  );
  server.registerTool(
    'record',
    {
      description: 'Record an entry.',
      inputSchema: { entry: z.string() },
      annotations: { destructiveHint: false, idempotentHint: false },
    },
    async ({ entry }, extra) => ({
      content: [
        {
          type: 'text',
          text: `recorded ${entry} with key ${String(extra._meta?.['skillflow/idempotency-key'] ?? 'none')}`,
        },
      ],
    }),
  );
  server.registerTool(
    'fail',
    { description: 'Always reports an error.', inputSchema: {}, annotations: { readOnlyHint: true } },
    async () => ({ content: [{ type: 'text', text: 'the record is locked' }], isError: true }),
  );
  server.registerTool(
    'dotted.name',
    { description: 'A tool whose name has a dot.', inputSchema: {}, annotations: { readOnlyHint: true } },
    async () => ({
      content: [{ type: 'text', text: 'dotted' }],
    }),
  );
  return server;
}

/** Holds the server's stdout, writing spaces (no message) until the reader lets go of the pipe (EPIPE), 30 s at most. */
const orphan =
  "process.stdout.on('error', () => process.exit()); setInterval(() => process.stdout.write(' '), 100); setTimeout(() => process.exit(), 30000);";

/**
 * A server that misbehaves, on stdio. Its tool list never ends: page N lists tool tN and offers page N+1. It answers
 * calls of tools it does not list: pid answers with the process id (the same id: the same connection); exit ends the
 * process during the call without an answer, with `code` or by `signal`, and with `orphan` first starts a process that
 * holds its pipes; secret-error answers with a JSON-RPC error whose text looks like a transport failure and carries a
 * secret.
 */
function faultyServer(): Server {
  const server = new Server({ name: 'skillflow-test-faulty', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, ({ params }) => {
    const page = Number(params?.cursor ?? 1);
    return { tools: [{ name: `t${page}`, inputSchema: { type: 'object' as const } }], nextCursor: String(page + 1) };
  });
  server.setRequestHandler(CallToolRequestSchema, ({ params }) => {
    const args = params.arguments ?? {};
    if (params.name === 'pid') return { content: [{ type: 'text', text: String(process.pid) }] };
    if (params.name === 'exit') {
      // A process of its own that keeps the server's stdout open (as a child of a wrapper such as npx can).
      if (args.orphan === true) spawn(process.execPath, ['-e', orphan], { stdio: ['ignore', 'inherit', 'ignore'] });
      if (typeof args.signal === 'string') process.kill(process.pid, args.signal as NodeJS.Signals);
      else process.exit(Number(args.code ?? 0));
      return new Promise<never>(() => undefined);
    }
    throw new McpError(
      ErrorCode.InternalError,
      'fetch failed: could not sign in to the upstream as admin with password hunter2',
    );
  });
  return server;
}

/**
 * A server of many large tools (MCP_TEST_MANY=COUNT,DESCRIPTION_CHARS,SCHEMA_CHARS): `tool_00`, `tool_01`, ... each
 * with a description and an input schema of about those sizes (JSON characters), taking `{text}` and answering
 * `echo tool_NN: TEXT`.
 */
function createManyServer(spec: string): Server {
  const [count, descriptionChars, schemaChars] = spec.split(',').map(Number);
  const tools = Array.from({ length: count }, (_, index) => {
    const mark = manyToolMark(index);
    const filler = (chars: number) =>
      `${mark} ${'lorem ipsum '.repeat(Math.ceil(chars / 12))}`.slice(0, Math.max(0, chars));
    const base = {
      type: 'object',
      properties: { text: { type: 'string', maxLength: 100, description: '' } },
      required: ['text'],
    };
    base.properties.text.description = filler(schemaChars - JSON.stringify(base).length);
    return {
      name: `tool_${String(index).padStart(2, '0')}`,
      description: filler(descriptionChars),
      inputSchema: base,
      annotations: { readOnlyHint: true },
    };
  });
  const server = new Server({ name: 'skillflow-many', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => ({
    content: [
      {
        type: 'text',
        text: `echo ${request.params.name}: ${String((request.params.arguments as { text?: unknown } | undefined)?.text)}`,
      },
    ],
  }));
  return server;
}

async function main(): Promise<void> {
  const [mode, port, token] = process.argv.slice(2);
  // A server that is down until a file exists (MCP_TEST_READY_FILE): rediscovery tests create it.
  const ready = process.env.MCP_TEST_READY_FILE;
  if (ready && !fs.existsSync(ready)) process.exit(1);
  const many = process.env.MCP_TEST_MANY;
  if (mode === 'stdio') {
    await (many ? createManyServer(many) : createServer()).connect(new StdioServerTransport());
    return;
  }
  if (mode === 'faulty') {
    await faultyServer().connect(new StdioServerTransport());
    return;
  }
  const sseSessions = new Map<string, SSEServerTransport>();
  const serve = async (request: http.IncomingMessage, response: http.ServerResponse) => {
    if (token && request.headers.authorization !== `Bearer ${token}`) {
      response.writeHead(401).end();
      return;
    }
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.pathname === '/sse' && request.method === 'GET') {
      const transport = new SSEServerTransport('/messages', response);
      sseSessions.set(transport.sessionId, transport);
      response.on('close', () => sseSessions.delete(transport.sessionId));
      await createServer().connect(transport);
      return;
    }
    if (url.pathname === '/messages' && request.method === 'POST') {
      const session = sseSessions.get(url.searchParams.get('sessionId') ?? '');
      if (session) await session.handlePostMessage(request, response);
      else response.writeHead(404).end();
      return;
    }
    if (request.url !== '/mcp') {
      response.writeHead(404).end();
      return;
    }
    const server = createServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response);
  };
  const httpServer = http.createServer((request, response) => {
    serve(request, response).catch((err) => {
      console.error(err);
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  httpServer.listen(Number(port ?? 0), '127.0.0.1', () =>
    console.log(`listening ${(httpServer.address() as { port: number }).port}`),
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
