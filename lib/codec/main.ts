import { loadConfig } from '../config';
import { createLogger } from '../logging';
import { serveCodec } from './serve';

/** `npm run codec`: the codec endpoint for the Temporal UI and CLI (docs/operators.md#reading-a-turn-in-the-temporal-ui). */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('skillflow-codec');
  for (const warning of config.warnings) logger.warn(warning);
  const codec = await serveCodec(config, (line) => logger.warn(line));
  logger.info(
    `Codec listening on ${codec.url} (POST /decode, /encode; operators' API keys); the Temporal UI's endpoint is kept in SKILLFLOW_CODEC_UI_TOKEN or ${config.secretsDir}/codec-ui-token`,
  );
  const stop = (signal: string) => {
    logger.info(`${signal}: stopping`);
    void codec.close().then(() => process.exit(0));
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop(signal));
}

main().catch((err: unknown) => {
  console.error(`codec: ${(err as Error).message}`);
  process.exit(1);
});
