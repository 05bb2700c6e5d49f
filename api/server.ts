import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../lib/config';
import { buildApp } from './app';
import { resolveApiKeys } from './auth';

async function main(): Promise<void> {
  const config = loadConfig();
  const connection = await Connection.connect({ address: config.temporalAddress });
  const client = new Client({ connection, namespace: config.temporalNamespace });
  const apiKeys = resolveApiKeys(config, (line) => console.log(`[api] ${line}`));
  if (!config.authEnabled) console.warn('[api] SKILLFLOW_AUTH=off: the API accepts every request without a key.');
  const app = await buildApp({ client, config, apiKeys, logger: process.env.SKILLFLOW_LOG_REQUESTS === '1' });
  app.addHook('onClose', async () => connection.close());

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    console.log(`[api] ${signal}: closing`);
    app.close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error('[api] error while closing:', err);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));

  const address = await app.listen({ port: config.port, host: config.host });
  console.log(`[api] listening on ${address}`);
}

main().catch((err) => {
  console.error('[api] fatal:', err instanceof Error ? err.message : err);
  process.exit(1);
});
