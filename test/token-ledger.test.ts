import type { LedgerScope } from '../core/budget';
import { loadConfig } from '../lib/config';
import { createTokenLedger, MemoryTokenLedger, RedisTokenLedger, type TokenLedger } from '../lib/budget';
import { requireRedis, testRedisUrl, uniqueRedisPrefix } from './support/services';

/**
 * The users' day ledgers of model tokens (issue 24.6): turns running at once share one remainder of the daily budget
 * instead of each spending it whole. The same checks run on the in-process ledger and on Redis.
 */

const scope = (turn: string, day = '2026-11-28', user = 'ivan'): LedgerScope => ({ user, day, turn });

const ledgers: Array<[string, () => TokenLedger]> = [
  ['memory', () => new MemoryTokenLedger()],
  ['Redis', () => new RedisTokenLedger(testRedisUrl(), uniqueRedisPrefix('budget'))],
];

describe.each(ledgers)('the token ledger in %s', (_name, make) => {
  let ledger: TokenLedger;
  beforeAll(async () => {
    if (_name === 'Redis') await requireRedis();
  });
  beforeEach(() => {
    ledger = make();
  });
  afterEach(() => ledger.close());

  it('two turns given the same remainder share it: what one holds or used, the other cannot have', async () => {
    // Both started with 1,000 left of the day (the API counted neither's usage yet).
    expect(await ledger.reserve({ scope: scope('A'), left: 1_000, tokens: 600 })).toEqual({
      granted: true,
      tokens: 600,
    });
    expect(await ledger.reserve({ scope: scope('B'), left: 1_000, tokens: 600 })).toEqual({
      granted: true,
      tokens: 400,
    });
    expect(await ledger.reserve({ scope: scope('B'), left: 1_000, tokens: 1 })).toEqual({
      granted: false,
      available: 0,
    });
    await ledger.settle({ scope: scope('A'), reserved: 600, used: 550 });
    // A's round used less than it held: the rest is free again, for either turn.
    expect(await ledger.reserve({ scope: scope('B'), left: 1_000, tokens: 100 })).toEqual({
      granted: true,
      tokens: 50,
    });
    await ledger.settle({ scope: scope('B'), reserved: 400, used: 500 });
    expect(await ledger.reserve({ scope: scope('A'), left: 450, tokens: 10 })).toEqual({
      granted: false,
      available: -100,
    });
  });

  it('a turn started later counts from the tokens settled when it first reserved (the API had counted them), not from those held', async () => {
    await ledger.reserve({ scope: scope('A'), left: 1_000, tokens: 300 });
    await ledger.settle({ scope: scope('A'), reserved: 300, used: 300 });
    // The API gave C what was left after A's 300: 700. Its ceiling starts from the ledger's 300.
    expect(await ledger.reserve({ scope: scope('C'), left: 700, tokens: 5_000 })).toEqual({
      granted: true,
      tokens: 700,
    });
    expect(await ledger.reserve({ scope: scope('A'), left: 700, tokens: 1 })).toEqual({ granted: false, available: 0 });
  });

  it("skill runs reserve under their turn's ceiling; other users and days have ledgers of their own", async () => {
    await ledger.reserve({ scope: scope('A'), left: 100, tokens: 100 });
    // A skill run of turn A hands its own count; the turn's ceiling is already set.
    expect(await ledger.reserve({ scope: scope('A'), left: 5_000, tokens: 1 })).toEqual({
      granted: false,
      available: 0,
    });
    expect(await ledger.reserve({ scope: scope('D', '2026-11-28', 'olga'), left: 100, tokens: 100 })).toEqual({
      granted: true,
      tokens: 100,
    });
    expect(await ledger.reserve({ scope: scope('E', '2026-11-29'), left: 100, tokens: 100 })).toEqual({
      granted: true,
      tokens: 100,
    });
  });
});

describe('the token ledger, set up and failing', () => {
  it('a Redis that fails grants without holding anything and reports it; settling reports it too', async () => {
    const errors: unknown[] = [];
    const ledger = new RedisTokenLedger('redis://127.0.0.1:1', 'x:', (err) => errors.push(err), 500);
    expect(await ledger.reserve({ scope: scope('A'), left: 100, tokens: 10 })).toEqual({ granted: true, tokens: 0 });
    await ledger.settle({ scope: scope('A'), reserved: 0, used: 10 });
    expect(errors).toHaveLength(2);
    await ledger.close();
  });

  it('in Redis when SKILLFLOW_REDIS_URL or a redis:// SKILLFLOW_STORE_URL is set, else in memory', async () => {
    const described = [
      loadConfig({ SKILLFLOW_REDIS_URL: 'redis://127.0.0.1:1/3', TEMPORAL_NAMESPACE: 'prod' }),
      loadConfig({ SKILLFLOW_STORE_URL: 'redis://127.0.0.1:1/4' }),
      loadConfig({ SKILLFLOW_STORE_URL: 'postgres://db/x' }),
      loadConfig({}),
    ].map((config) => createTokenLedger(config));
    expect(described.map((ledger) => ledger.description)).toEqual([
      'Redis at redis://127.0.0.1:1/3 (keys skillflow:prod:budget:*)',
      'Redis at redis://127.0.0.1:1/4 (keys skillflow:default:budget:*)',
      "this worker's memory",
      "this worker's memory",
    ]);
    await Promise.all(described.map((ledger) => ledger.close()));
  });
});
