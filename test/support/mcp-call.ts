import { McpServerConnection, type McpServerConfig } from '../../lib/tools/mcp';

/**
 * `mcp-call.ts CONFIG TOOL INPUT` (JSON, a tool name, JSON): one call to an MCP server, then a discovery, on a
 * connection of its own, outside Jest's VM (whose errors, of another realm, are not `instanceof Error`, so code that
 * reads errors can pass in Jest and fail in the worker). Prints {"call": result or thrown message, "discover": the
 * tools' names or the thrown message} as JSON.
 */
async function main(): Promise<void> {
  const [config, tool, input] = process.argv.slice(2);
  const connection = new McpServerConnection(JSON.parse(config) as McpServerConfig);
  const settled = <T>(promise: Promise<T>) =>
    promise.catch((err: unknown) => ({ thrown: err instanceof Error ? err.message : String(err) }));
  const call = await settled(
    connection.call(tool, JSON.parse(input) as Record<string, unknown>, {
      callId: 'toolu_test',
      attempt: 1,
      signal: new AbortController().signal,
      heartbeat: () => undefined,
    }),
  );
  const discover = await settled(
    connection.discover().then(({ tools }) => tools.map((registered) => registered.spec.name)),
  );
  await connection.close();
  process.stdout.write(JSON.stringify({ call, discover }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
