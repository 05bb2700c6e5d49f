import Redis from 'ioredis';
import type { LedgerScope, ReserveRequest, Reservation, SettleRequest } from '../../core/budget';
import { closeRedis } from '../redis-close';
import { ledgerRetentionMs, type TokenLedger } from './token-ledger';

/**
 * Reads the user's day (settled and held tokens) and the turn's ceiling (setting it, the first time, to the settled
 * tokens plus what the run has left), and holds up to the tokens asked while anything is left under the ceiling, in
 * one step. Returns [granted, available].
 */
const reserveScript = `
local settled = tonumber(redis.call('HGET', KEYS[1], 'settled') or '0')
local held = tonumber(redis.call('HGET', KEYS[1], 'held') or '0')
local ceiling = tonumber(redis.call('GET', KEYS[2]) or '')
if ceiling == nil then ceiling = settled + tonumber(ARGV[1]) end
redis.call('SET', KEYS[2], ceiling, 'PX', ARGV[3])
local available = ceiling - settled - held
if available <= 0 then return {0, available} end
local granted = math.min(tonumber(ARGV[2]), available)
redis.call('HINCRBY', KEYS[1], 'held', granted)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {granted, available}`;

/**
 * The ledgers in Redis under `<prefix>budget:`: a hash per user and day (settled and held tokens, as the memory
 * ledger keeps them), a ceiling per turn. A Redis that fails is
 * reported and treated as holding nothing: the reservation is granted without holding anything (0 tokens), so the
 * run's own count of its tokens is the only bound until Redis is back.
 */
export class RedisTokenLedger implements TokenLedger {
  private readonly client: Redis;

  constructor(
    private readonly url: string,
    private readonly prefix: string,
    private readonly onError: (err: unknown) => void = () => undefined,
    commandTimeoutMs = 2_000,
  ) {
    this.client = new Redis(url, {
      connectionName: 'skillflow-budget',
      maxRetriesPerRequest: 0,
      commandTimeout: commandTimeoutMs,
    });
    this.client.on('error', () => undefined);
  }

  get description(): string {
    return `Redis at ${this.url.replace(/\/\/[^@/]*@/, '//***@')} (keys ${this.prefix}budget:*)`;
  }

  async reserve({ scope, left, tokens }: ReserveRequest): Promise<Reservation> {
    try {
      const [granted, available] = (await this.client.eval(
        reserveScript,
        2,
        this.ledgerKey(scope),
        this.ceilingKey(scope),
        left,
        tokens,
        ledgerRetentionMs,
      )) as [number, number];
      return granted > 0 ? { granted: true, tokens: granted } : { granted: false, available };
    } catch (err) {
      this.onError(err);
      return { granted: true, tokens: 0 };
    }
  }

  async settle({ scope, reserved, used }: SettleRequest): Promise<void> {
    const key = this.ledgerKey(scope);
    await this.client
      .multi()
      .hincrby(key, 'held', -reserved)
      .hincrby(key, 'settled', used)
      .pexpire(key, ledgerRetentionMs)
      .exec()
      .catch((err: unknown) => this.onError(err));
  }

  async close(): Promise<void> {
    await closeRedis(this.client);
  }

  private ledgerKey(scope: LedgerScope): string {
    return `${this.prefix}budget:ledger:${scope.day}:${scope.user}`;
  }

  private ceilingKey(scope: LedgerScope): string {
    return `${this.prefix}budget:ceiling:${scope.turn}`;
  }
}
