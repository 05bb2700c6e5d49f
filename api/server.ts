import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { SkillRegistry } from '../lib/skills';
import { loadConfig } from '../lib/config';
import { createApiLiveChannel, describeLiveChannel } from '../lib/live';
import { buildApp } from './app';
import { resolveApiKeys } from './auth';
import { resolveStreamTokenSecret } from './stream-tokens';

async function main(): Promise<void> {
  const config = loadConfig();
  const connection = await Connection.connect({ address: config.temporalAddress });
  const client = new Client({ connection, namespace: config.temporalNamespace });
  const apiKeys = resolveApiKeys(config, (line) => console.log(`[api] ${line}`));
  if (!config.authEnabled) console.warn('[api] SKILLFLOW_AUTH=off: the API accepts every request without a key.');
  const live = await createApiLiveChannel(config, (line) => console.log(`[api] ${line}`));
  const skills = new SkillRegistry({ skillsDir: config.skillsDir, storeDir: path.join(config.dataDir, 'skill-store') });
  const app = await buildApp({
    client,
    config,
    apiKeys,
    live,
    skills,
    streamTokenSecret: resolveStreamTokenSecret(config),
    logger: config.logRequests,
  });
  app.addHook('onClose', async () => {
    await live.close();
    await connection.close();
  });

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
  console.log(`[api] listening on ${address}; live events from workers through ${describeLiveChannel(config)}`);
}

main().catch((err) => {
  console.error('[api] fatal:', err instanceof Error ? err.message : err);
  process.exit(1);
});
