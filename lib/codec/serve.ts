import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { isLoopbackHost, type Config } from '../config';
import { localOnlyOf } from '../local-only';
import { MemoryWindowStore, RateLimiter } from '../rate-limits';
import { SkillStore } from '../skills/skill-store';
import { createSharedStore } from '../store';
import { codecAccessOf, uiEndpointOf } from './access';
import { RecentConversations } from './conversations';
import { createCodecServer } from './server';

export interface RunningCodec {
  /** Where it listens, e.g. http://127.0.0.1:8234. */
  url: string;
  /** The endpoint the Temporal UI calls (`/ui/<token>`): a secret, like an operator's key. */
  uiEndpoint: string;
  close(): Promise<void>;
}

/** The codec of a deployment: its shared store and skill store, its keys, on SKILLFLOW_CODEC_HOST:PORT. */
export async function serveCodec(
  config: Config,
  log: (line: string) => void,
  port = config.codec.port,
): Promise<RunningCodec> {
  const store = createSharedStore(config);
  const access = codecAccessOf(config, log);
  const server = createCodecServer({
    sources: {
      store,
      storeRetentionHours: config.storeRetentionHours,
      skills: new SkillStore(path.join(config.dataDir, 'skill-store')),
      recent: new RecentConversations(),
      conversationBytes: config.codec.conversationBytes,
    },
    access,
    namespace: config.temporalNamespace,
    uiOrigins: config.codec.uiOrigins,
    maxBodyBytes: config.codec.maxBodyBytes,
    log,
    failedAuth:
      config.addressRateLimitPerMinute > 0
        ? new RateLimiter(new MemoryWindowStore(), config.addressRateLimitPerMinute, 60_000)
        : undefined,
    localOnly: config.authEnabled
      ? undefined
      : localOnlyOf(
          'the codec',
          'SKILLFLOW_CODEC_UI_ORIGINS',
          config.codec.uiOrigins,
          isLoopbackHost(config.codec.host),
        ),
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, config.codec.host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  const host = config.codec.host.includes(':') ? `[${config.codec.host}]` : config.codec.host;
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${bound}`;
  return {
    url,
    uiEndpoint: uiEndpointOf(url, access.uiToken),
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await store.close();
    },
  };
}
