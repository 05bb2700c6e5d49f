import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';
import type { Config } from '../lib/config';
import type { Logger } from '../lib/logging';

const levels: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/**
 * The Temporal runtime of the worker process: the SDK's and the workflows' logs go to the worker's structured log
 * (with workflow and activity ids, and a turn's `requestId`), and with SKILLFLOW_WORKER_METRICS_PORT the SDK's metrics
 * (task latencies, polls, slots, activity and workflow outcomes) are served for Prometheus at `/metrics` on that port.
 */
export function installRuntime(
  config: Pick<Config, 'workerLogLevel' | 'workerMetricsPort' | 'host'>,
  logger: Logger,
): void {
  const metrics =
    config.workerMetricsPort > 0
      ? { metrics: { prometheus: { bindAddress: `${config.host}:${config.workerMetricsPort}` } } }
      : undefined;
  Runtime.install({
    logger: new DefaultLogger(config.workerLogLevel, ({ level, message, meta }) =>
      logger[levels[level]]({ ...meta }, message),
    ),
    // worker/main.ts handles the signals, so the shutdown can be logged and given its grace.
    shutdownSignals: [],
    ...(metrics ? { telemetryOptions: metrics } : {}),
  });
}
