import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError, defaultModel, loadConfig } from '../lib/config';
import { turnSettingsFrom } from '../lib/turn-settings';

describe('configuration', () => {
  it('has documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      temporalAddress: 'localhost:7233',
      temporalNamespace: 'default',
      taskQueue: 'skillflow',
      dataDir: path.resolve('.data'),
      skillsDir: path.resolve('skills'),
      model: defaultModel,
      retentionDays: 30,
      authEnabled: true,
      apiKeys: [],
      checkpointTtlMs: 0,
    });
    expect(turnSettingsFrom(config).checkpointTtlMs).toBeNull();
    expect(config.anthropicApiKey).toBeUndefined();
  });

  it('reports every bad value at once, with the fix', () => {
    const load = () =>
      loadConfig({
        PORT: 'eighty',
        TEMPORAL_ADDRESS: 'nohost',
        ANTHROPIC_BASE_URL: 'ftp://x',
        SKILLFLOW_AUTH: 'maybe',
      });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/PORT="eighty" is not a whole number from 0 to 65535/);
    expect(load).toThrow(/TEMPORAL_ADDRESS="nohost" must be host:port/);
    expect(load).toThrow(/ANTHROPIC_BASE_URL="ftp:\/\/x" is not an http\(s\) URL/);
    expect(load).toThrow(/SKILLFLOW_AUTH="maybe" must be "on" or "off"/);
  });

  it('parses API keys with users and the operator role', () => {
    const config = loadConfig({ SKILLFLOW_API_KEYS: 'aaaaaaaaaaaaaaaa=alice, bbbbbbbbbbbbbbbb=ops:operator' });
    expect(config.apiKeys).toEqual([
      { key: 'aaaaaaaaaaaaaaaa', user: 'alice', operator: false },
      { key: 'bbbbbbbbbbbbbbbb', user: 'ops', operator: true },
    ]);
    expect(() => loadConfig({ SKILLFLOW_API_KEYS: 'short=alice' })).toThrow(/key=user or key=user:operator/);
  });

  it('checks the thinking budget against the output limit', () => {
    expect(() => loadConfig({ SKILLFLOW_THINKING_BUDGET_TOKENS: '8192' })).toThrow(
      /must be at least 1024 and below SKILLFLOW_MODEL_MAX_TOKENS \(8192\)/,
    );
    expect(() => loadConfig({ SKILLFLOW_THINKING_BUDGET_TOKENS: '512' })).toThrow(/at least 1024/);
    expect(loadConfig({ SKILLFLOW_THINKING_BUDGET_TOKENS: '4096' }).thinkingBudgetTokens).toBe(4096);
  });

  it('reads thinking (on when only a budget is set) and effort, into the turn settings', () => {
    expect(loadConfig({})).toMatchObject({ thinking: false, effort: undefined });
    expect(loadConfig({ SKILLFLOW_THINKING_BUDGET_TOKENS: '4096' }).thinking).toBe(true);
    expect(loadConfig({ SKILLFLOW_THINKING_BUDGET_TOKENS: '4096', SKILLFLOW_THINKING: 'off' }).thinking).toBe(false);
    const config = loadConfig({ SKILLFLOW_THINKING: 'on', SKILLFLOW_EFFORT: 'High' });
    expect(config).toMatchObject({ thinking: true, effort: 'high' });
    expect(turnSettingsFrom(config)).toMatchObject({ thinking: true, effort: 'high' });
    expect(turnSettingsFrom(loadConfig({}))).not.toHaveProperty('effort');
    expect(() => loadConfig({ SKILLFLOW_THINKING: 'adaptive' })).toThrow(
      /SKILLFLOW_THINKING="adaptive" must be one of ON, OFF/,
    );
    expect(() => loadConfig({ SKILLFLOW_EFFORT: 'extreme' })).toThrow(
      /SKILLFLOW_EFFORT="extreme" must be one of low, medium, high, xhigh, max, or unset/,
    );
  });

  it('refuses SKILLFLOW_AUTH=off on a non-loopback HOST unless SKILLFLOW_UNAUTHENTICATED_NETWORK=allow says so', () => {
    for (const host of ['0.0.0.0', '::', '192.168.1.10', 'api.example.com']) {
      expect(() => loadConfig({ SKILLFLOW_AUTH: 'off', HOST: host })).toThrow(
        /SKILLFLOW_AUTH=off with HOST=.* would let anyone who can reach this address act as an operator/,
      );
      expect(
        loadConfig({ SKILLFLOW_AUTH: 'off', HOST: host, SKILLFLOW_UNAUTHENTICATED_NETWORK: 'allow' }),
      ).toMatchObject({ authEnabled: false, unauthenticatedNetwork: true });
    }
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]']) {
      expect(loadConfig({ SKILLFLOW_AUTH: 'off', HOST: host }).authEnabled).toBe(false);
    }
    expect(loadConfig({ HOST: '0.0.0.0' }).authEnabled).toBe(true);
    expect(() => loadConfig({ SKILLFLOW_UNAUTHENTICATED_NETWORK: 'yes' })).toThrow(/must be "allow" or "refuse"/);
  });

  it('has documented defaults for the limits and quotas, and checks them', () => {
    expect(loadConfig({})).toMatchObject({
      addressRateLimitPerMinute: 120,
      maxStreamsPerKey: 32,
      maxStreams: 1000,
      sessionIdleMs: 30 * 24 * 3600_000,
      maxSessionsPerUser: 100,
      userDailyTokens: 5_000_000,
      redisPrefix: 'skillflow:default:',
    });
    expect(loadConfig({ TEMPORAL_NAMESPACE: 'prod' }).redisPrefix).toBe('skillflow:prod:');
    expect(loadConfig({ SKILLFLOW_REDIS_PREFIX: 'team-a:' }).redisPrefix).toBe('team-a:');
    const load = () =>
      loadConfig({
        SKILLFLOW_MAX_STREAMS_PER_KEY: '0',
        SKILLFLOW_SESSION_IDLE_MS: '-1',
        SKILLFLOW_REDIS_PREFIX: 'no spaces',
        SKILLFLOW_USER_DAILY_TOKENS: 'lots',
      });
    expect(load).toThrow(/SKILLFLOW_MAX_STREAMS_PER_KEY="0" is not a whole number from 1/);
    expect(load).toThrow(/SKILLFLOW_SESSION_IDLE_MS="-1"/);
    expect(load).toThrow(/SKILLFLOW_REDIS_PREFIX="no spaces" must be/);
    expect(load).toThrow(/SKILLFLOW_USER_DAILY_TOKENS="lots"/);
  });

  it("bounds how much of a model call's conversation the codec shows whole", () => {
    expect(loadConfig({}).codec.conversationBytes).toBe(65_536);
    expect(loadConfig({ SKILLFLOW_CODEC_CONVERSATION_BYTES: '1048576' }).codec.conversationBytes).toBe(1_048_576);
    expect(() => loadConfig({ SKILLFLOW_CODEC_CONVERSATION_BYTES: '100' })).toThrow(
      /SKILLFLOW_CODEC_CONVERSATION_BYTES="100" is not a whole number from 1024 to 67108864/,
    );
  });

  it('turns SKILLFLOW_AUTH=off into an explicit opt-out and trims a base URL', () => {
    const config = loadConfig({ SKILLFLOW_AUTH: 'off', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9999/' });
    expect(config.authEnabled).toBe(false);
    expect(config.anthropicBaseUrl).toBe('http://127.0.0.1:9999');
  });

  it('takes durations in milliseconds or with units', () => {
    const config = loadConfig({
      SKILLFLOW_CHECKPOINT_TTL_MS: '24h',
      SKILLFLOW_WAIT_TIMEOUT_MS: '15m',
      SKILLFLOW_REQUEST_TIMEOUT_MS: '1m30s',
      SKILLFLOW_STREAM_TOKEN_TTL_MS: '120000',
      SKILLFLOW_MODEL_TIMEOUT_MS: '20m',
    });
    expect(config).toMatchObject({
      checkpointTtlMs: 86_400_000,
      waitTimeoutMs: 900_000,
      requestTimeoutMs: 90_000,
      streamTokenTtlMs: 120_000,
      modelTimeoutMs: 1_200_000,
    });
    expect(loadConfig({ SKILLFLOW_CHECKPOINT_TTL_MS: '0' }).checkpointTtlMs).toBe(0);
    expect(() => loadConfig({ SKILLFLOW_REQUEST_TIMEOUT_MS: 'soon' })).toThrow(
      'SKILLFLOW_REQUEST_TIMEOUT_MS="soon" is not a duration from 1s to 1h: write milliseconds (30000) or a duration such as 90s, 15m, 24h, 1h30m; unset it to use 30s.',
    );
    expect(() => loadConfig({ SKILLFLOW_REQUEST_TIMEOUT_MS: '2h' })).toThrow(/is not a duration from 1s to 1h/);
  });

  it('warns about SKILLFLOW_* variables nothing reads, naming the likely one', () => {
    const config = loadConfig({
      SKILLFLOW_MAX_ROUND: '5',
      SKILLFLOW_NOPE: '1',
      SKILLFLOW_MAX_ROUNDS: '7',
      SKILLFLOW_URL: 'http://x',
      SKILLFLOW_TEST_ANYTHING: '1',
    });
    expect(config.maxRounds).toBe(7);
    expect(config.warnings).toEqual([
      'SKILLFLOW_MAX_ROUND is set but skillflow reads no such variable; did you mean SKILLFLOW_MAX_ROUNDS?',
      'SKILLFLOW_NOPE is set but skillflow reads no such variable; see .env.example for the settings.',
    ]);
    expect(loadConfig({}).warnings).toEqual([]);
  });

  it('loads .env from the working directory; the real environment wins', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-dotenv-'));
    fs.writeFileSync(
      path.join(dir, '.env'),
      '# settings\nSKILLFLOW_MAX_ROUNDS=12\nSKILLFLOW_TASK_QUEUE="from-file"\nSKILLFLOW_WAIT_TIMEOUT_MS=2m\n',
    );
    const script = `const { loadConfig } = require(${JSON.stringify(path.resolve(__dirname, '../lib/config'))});
      const c = loadConfig(); process.stdout.write(JSON.stringify([c.maxRounds, c.taskQueue, c.waitTimeoutMs]));`;
    const run = (extra: Record<string, string>) => {
      const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SKILLFLOW_')));
      return JSON.parse(
        execFileSync(process.execPath, ['--import', pathToFileURL(require.resolve('tsx')).href, '-e', script], {
          cwd: dir,
          env: { ...env, ...extra },
          encoding: 'utf8',
        }),
      );
    };
    expect(run({})).toEqual([12, 'from-file', 120_000]);
    expect(run({ SKILLFLOW_MAX_ROUNDS: '3' })).toEqual([3, 'from-file', 120_000]);
  });

  it('tool settings: grants and hosts are checked, the defaults offer nothing and fetch nothing', () => {
    const defaults = loadConfig({});
    expect(defaults).toMatchObject({
      defaultTools: [],
      httpFetchHosts: [],
      httpFetchMaxBytes: 262_144,
      httpFetchTimeoutMs: 10_000,
      mcpConfigPath: undefined,
      toolCatalogMaxBytes: 512 * 1024,
    });
    expect(defaults.toolsDir).toBe(path.resolve('tools'));
    const set = loadConfig({
      SKILLFLOW_DEFAULT_TOOLS: 'calculator, category:web mcp:github',
      SKILLFLOW_HTTP_FETCH_HOSTS: 'API.example.com *.wikipedia.org,10.0.0.5:8080 [::1]:3000',
      SKILLFLOW_HTTP_FETCH_TIMEOUT_MS: '30s',
      SKILLFLOW_MCP_CONFIG: 'mcp.json',
      SKILLFLOW_TOOL_CATALOG_MAX_BYTES: '1048576',
    });
    expect(set).toMatchObject({
      defaultTools: ['calculator', 'category:web', 'mcp:github'],
      httpFetchHosts: ['api.example.com', '*.wikipedia.org', '10.0.0.5:8080', '[::1]:3000'],
      httpFetchTimeoutMs: 30_000,
      mcpConfigPath: path.resolve('mcp.json'),
      toolCatalogMaxBytes: 1_048_576,
    });
    // The catalog's bound stays where a skill granting every tool still fits Temporal's 2 MiB payload limit.
    expect(() => loadConfig({ SKILLFLOW_TOOL_CATALOG_MAX_BYTES: String(2 * 1024 * 1024) })).toThrow(
      /SKILLFLOW_TOOL_CATALOG_MAX_BYTES/,
    );
    expect(() =>
      loadConfig({ SKILLFLOW_DEFAULT_TOOLS: 'Bash(git:*)', SKILLFLOW_HTTP_FETCH_HOSTS: 'https://example.com/path' }),
    ).toThrow(
      /SKILLFLOW_DEFAULT_TOOLS entry "Bash\(git:\*\)" must be a tool name[\s\S]*SKILLFLOW_HTTP_FETCH_HOSTS entry "https:\/\/example.com\/path" must be a host name/,
    );
  });
});
