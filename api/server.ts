import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry/lib/client';
import { SkillRegistry } from '../lib/skills';
import { loadConfig } from '../lib/config';
import { createLogger, opsLogOf } from '../lib/logging';
import { tracingFromConfig } from '../lib/tracing';
import { createApiLiveChannel, describeLiveChannel } from '../lib/live';
import { buildApp } from './app';
import { resolveApiKeys } from './auth';
import { FileLinkStore } from './links/store';
import { ApiMetrics, serveMetrics } from './metrics';
import { resolveStreamTokenSecret } from './stream-tokens';
import { defaultWebAppDir, describeWebApp, webAppBuilt } from './web-app';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('skillflow-api');
  for (const warning of config.warnings) logger.warn(warning);
  const tracing = tracingFromConfig(config, 'skillflow-api');
  const connection = await Connection.connect(config.temporal.connection);
  const interceptors = tracing ? { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } : undefined;
  const client = new Client({ connection, namespace: config.temporalNamespace, interceptors });
  const metrics = config.apiMetricsPort > 0 ? new ApiMetrics({ processMetrics: true }) : undefined;
  const apiKeys = resolveApiKeys(config, (line) => logger.info(line));
  if (!config.authEnabled) {
    const reach = config.unauthenticatedNetwork
      ? `from the network (HOST=${config.host}, SKILLFLOW_UNAUTHENTICATED_NETWORK=allow)`
      : 'from this machine';
    logger.warn(`SKILLFLOW_AUTH=off: the API accepts every request ${reach} without a key, as an operator.`);
  }
  const live = await createApiLiveChannel(config, opsLogOf(logger));
  const skills = new SkillRegistry({ skillsDir: config.skillsDir, storeDir: path.join(config.dataDir, 'skill-store') });
  const app = await buildApp({
    client,
    config,
    apiKeys,
    live,
    skills,
    streamTokenSecret: resolveStreamTokenSecret(config),
    // Without Redis the links are this process's, kept in its data dir so that they outlive a restart.
    ...(config.redisUrl ? {} : { links: new FileLinkStore(path.join(config.dataDir, 'links.json')) }),
    logger,
    metrics,
    tracer: tracing?.tracer,
    log: opsLogOf(logger),
  });
  const metricsServer = metrics ? await serveMetrics(metrics.registry, config.apiMetricsPort, config.host) : undefined;
  app.addHook('onClose', async () => {
    metricsServer?.close();
    await live.close();
    await connection.close();
    await tracing?.shutdown();
  });

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info(`${signal}: closing`);
    app.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'error while closing');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));

  const address = await app.listen({ port: config.port, host: config.host });
  logger.info(`listening on ${address}; live events from workers through ${describeLiveChannel(config)}`);
  const webApp = describeWebApp(config);
  if (config.appEnabled && !webAppBuilt(defaultWebAppDir)) logger.warn(webApp);
  else logger.info(webApp);
  if (metricsServer) logger.info(`request metrics on http://${config.host}:${config.apiMetricsPort}/metrics`);
  if (tracing) logger.info(`traces go to ${config.otlpEndpoint}`);
}

main().catch((err) => {
  console.error('[api] fatal:', err instanceof Error ? err.message : err);
  process.exit(1);
});
