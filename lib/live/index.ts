import type { Config } from '../config';
import type { OpsLog } from '../logging';
import type { LiveChannel } from './channel';
import { InProcessChannel } from './in-process';
import { RedisChannel } from './redis';
import { SocketBroker } from './socket-broker';
import { liveSocketPath } from './socket-path';
import { SocketPublisher } from './socket-publisher';

export type { DeltaEvent, LiveChannel, LiveEvent, LiveListener, LogAppendedEvent, LoggedEvent } from './channel';
export { InProcessChannel } from './in-process';
export { RedisChannel } from './redis';
export { SocketBroker, LiveSocketInUseError } from './socket-broker';
export { SocketPublisher } from './socket-publisher';
export { liveSocketPath, LiveSocketPathError } from './socket-path';

type LiveConfig = Pick<Config, 'redisUrl' | 'redisPrefix' | 'dataDir' | 'liveSocketPath'>;

export function describeLiveChannel(config: LiveConfig): string {
  return config.redisUrl
    ? `Redis pub/sub at ${redactUrl(config.redisUrl)}`
    : `the local socket ${liveSocketPath(config.dataDir, config.liveSocketPath)}`;
}

/** The API's channel: Redis when configured, else the local socket broker workers on this machine publish to. */
export async function createApiLiveChannel(config: LiveConfig, log: OpsLog): Promise<LiveChannel> {
  if (config.redisUrl) return new RedisChannel(config.redisUrl, { prefix: redisPrefix(config), log });
  const socketPath = liveSocketPath(config.dataDir, config.liveSocketPath);
  try {
    return await SocketBroker.listen(socketPath);
  } catch (err) {
    log(
      `live events: cannot serve ${socketPath} (${(err as Error).message}); message deltas from workers will not reach ` +
        'this API process. Several API processes need SKILLFLOW_REDIS_URL.',
    );
    return new InProcessChannel();
  }
}

/** The worker's channel: publishes to Redis when configured, else to the API's local socket. */
export function createWorkerLiveChannel(config: LiveConfig, log: OpsLog): LiveChannel {
  if (config.redisUrl) return new RedisChannel(config.redisUrl, { prefix: redisPrefix(config), log });
  return new SocketPublisher(liveSocketPath(config.dataDir, config.liveSocketPath), { log });
}

function redisPrefix(config: LiveConfig): string {
  return `${config.redisPrefix}live:`;
}

function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}
