import path from 'node:path';
import type { Config } from '../config';
import type { OpsLog } from '../logging';
import { FileStore } from './file-store';
import { PostgresStore } from './postgres-store';
import { RedisStore } from './redis-store';
import type { SharedStore } from './shared-store';

export { FileStore } from './file-store';
export { PostgresStore } from './postgres-store';
export { RedisStore } from './redis-store';
export { SharedStoreError, type SharedStore } from './shared-store';

type StoreConfig = Pick<Config, 'storeUrl' | 'storeRetentionHours' | 'dataDir' | 'temporalNamespace'>;

/**
 * The store `SKILLFLOW_STORE_URL` names (redis://, postgres://, file:///dir), else files in the data dir. `log` hears of
 * a Redis or PostgreSQL that goes, hangs or comes back.
 */
export function createSharedStore(config: StoreConfig, log?: OpsLog): SharedStore {
  const retentionMs = config.storeRetentionHours * 3_600_000;
  const url = config.storeUrl;
  if (!url) return new FileStore(path.join(config.dataDir, 'store'), retentionMs);
  const scheme = new URL(url).protocol;
  if (scheme === 'redis:' || scheme === 'rediss:')
    return new RedisStore(url, `skillflow:${config.temporalNamespace}:store:`, retentionMs, undefined, log);
  if (scheme === 'postgres:' || scheme === 'postgresql:')
    return new PostgresStore(url, config.temporalNamespace, retentionMs, undefined, log);
  return new FileStore(new URL(url).pathname, retentionMs);
}

/**
 * Runs `sweep()` now and then every `everyMs` until the returned function is called; a failed sweep is logged and
 * retried at the next tick. Any number of workers may sweep the same store.
 */
export function sweepPeriodically(store: SharedStore, everyMs: number, log: (line: string) => void): () => void {
  let running = false;
  const sweep = () => {
    if (running) return;
    running = true;
    store
      .sweep()
      .then(
        (removed) =>
          removed > 0 &&
          log(`store: removed ${removed} idle turn${removed === 1 ? '' : 's'} from ${store.description}`),
        (err: unknown) => log(`store: sweep failed (${(err as Error).message}); retrying later`),
      )
      .finally(() => {
        running = false;
      });
  };
  sweep();
  const timer = setInterval(sweep, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
