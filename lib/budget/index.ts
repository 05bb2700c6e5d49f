import type { Config } from '../config';
import { RedisTokenLedger } from './redis-token-ledger';
import { MemoryTokenLedger, type TokenLedger } from './token-ledger';

export { MemoryTokenLedger, type TokenLedger } from './token-ledger';
export { RedisTokenLedger } from './redis-token-ledger';

type LedgerConfig = Pick<Config, 'redisUrl' | 'redisPrefix' | 'storeUrl'>;

/** The ledgers in Redis (SKILLFLOW_REDIS_URL, else a redis:// SKILLFLOW_STORE_URL), else in this process's memory. */
export function createTokenLedger(config: LedgerConfig, log: (line: string) => void = () => undefined): TokenLedger {
  const url = config.redisUrl ?? (config.storeUrl && /^rediss?:/.test(config.storeUrl) ? config.storeUrl : undefined);
  if (!url) return new MemoryTokenLedger();
  return new RedisTokenLedger(url, config.redisPrefix, (err) =>
    log(`token ledger: Redis failed (${(err as Error).message}); a model round goes on unreserved`),
  );
}
