import { ConfigError, loadConfig } from '../lib/config';

describe('API configuration', () => {
  it('has documented defaults: limits high enough for 50 concurrent turns, no CORS, no Redis', () => {
    expect(loadConfig({})).toMatchObject({
      bodyLimitBytes: 1024 * 1024,
      requestTimeoutMs: 30_000,
      waitTimeoutMs: 60_000,
      rateLimitPerMinute: 60_000,
      corsOrigins: [],
      streamTokenTtlMs: 300_000,
      streamTokenSecret: undefined,
      redisUrl: undefined,
      liveSocketPath: undefined,
    });
  });

  it('reads origins, Redis and the live socket', () => {
    const config = loadConfig({
      SKILLFLOW_CORS_ORIGINS: 'https://app.example.com/, http://localhost:5173',
      SKILLFLOW_REDIS_URL: 'redis://redis:6379',
      SKILLFLOW_LIVE_SOCKET: '/run/skillflow/live.sock',
      SKILLFLOW_RATE_LIMIT: '0',
    });
    expect(config).toMatchObject({
      corsOrigins: ['https://app.example.com', 'http://localhost:5173'],
      redisUrl: 'redis://redis:6379',
      liveSocketPath: '/run/skillflow/live.sock',
      rateLimitPerMinute: 0,
    });
    expect(loadConfig({ SKILLFLOW_CORS_ORIGINS: '*' }).corsOrigins).toEqual(['*']);
  });

  it('refuses bad values with the fix', () => {
    const load = () =>
      loadConfig({
        SKILLFLOW_CORS_ORIGINS: 'app.example.com',
        SKILLFLOW_REDIS_URL: 'http://redis',
        SKILLFLOW_RATE_LIMIT: '-1',
        SKILLFLOW_BODY_LIMIT_BYTES: '10',
      });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/SKILLFLOW_CORS_ORIGINS entry "app.example.com" must be an origin/);
    expect(load).toThrow(/SKILLFLOW_REDIS_URL="http:\/\/redis" must be a redis:\/\/ or rediss:\/\/ URL/);
    expect(load).toThrow(/SKILLFLOW_RATE_LIMIT="-1" is not a whole number/);
    expect(load).toThrow(/SKILLFLOW_BODY_LIMIT_BYTES="10" is not a whole number from 1024/);
  });
});
