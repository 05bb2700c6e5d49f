import http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/**
 * A small MCP server for the tests, on either transport: `stdio`, or `http PORT` (streamable HTTP, stateless, at /mcp;
 * prints `listening PORT` once it listens). Tools: echo (read-only), slow (waits), record (not idempotent: answers with
 * the idempotency key it was given), and dotted.name (a name that needs namespacing).
 */
function createServer(): McpServer {
  const server = new McpServer({ name: 'skillflow-test', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Echo the text back.', inputSchema: { text: z.string().max(100) }, annotations: { readOnlyHint: true } },
    async ({ text }) => ({ content: [{ type: 'text', text: `echo: ${text}` }] }),
  );
  server.registerTool(
    'slow',
    { description: 'Answer after a while.', inputSchema: { ms: z.number().int().min(0) }, annotations: { readOnlyHint: true } },
    async ({ ms }) => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return { content: [{ type: 'text', text: `slept ${ms} ms` }] };
    },
  );
  server.registerTool(
    'record',
    { description: 'Record an entry.', inputSchema: { entry: z.string() }, annotations: { destructiveHint: false, idempotentHint: false } },
    async ({ entry }, extra) => ({ content: [{ type: 'text', text: `recorded ${entry} with key ${String(extra._meta?.['skillflow/idempotency-key'] ?? 'none')}` }] }),
  );
  server.registerTool(
    'fail',
    { description: 'Always reports an error.', inputSchema: {}, annotations: { readOnlyHint: true } },
    async () => ({ content: [{ type: 'text', text: 'the record is locked' }], isError: true }),
  );
  server.registerTool('dotted.name', { description: 'A tool whose name has a dot.', inputSchema: {}, annotations: { readOnlyHint: true } }, async () => ({
    content: [{ type: 'text', text: 'dotted' }],
  }));
  return server;
}

async function main(): Promise<void> {
  const [mode, port] = process.argv.slice(2);
  if (mode === 'stdio') {
    await createServer().connect(new StdioServerTransport());
    return;
  }
  const serve = async (request: http.IncomingMessage, response: http.ServerResponse) => {
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
  httpServer.listen(Number(port ?? 0), '127.0.0.1', () => console.log(`listening ${(httpServer.address() as { port: number }).port}`));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
