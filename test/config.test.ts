import path from 'node:path';
import { ConfigError, defaultModel, loadConfig } from '../lib/config';

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
    });
    expect(config.anthropicApiKey).toBeUndefined();
  });

  it('reports every bad value at once, with the fix', () => {
    const load = () => loadConfig({ PORT: 'eighty', TEMPORAL_ADDRESS: 'nohost', ANTHROPIC_BASE_URL: 'ftp://x', SKILLFLOW_AUTH: 'maybe' });
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
    expect(() => loadConfig({ SKILLFLOW_THINKING_BUDGET_TOKENS: '8192' })).toThrow(/must be at least 1024 and below SKILLFLOW_MODEL_MAX_TOKENS \(8192\)/);
    expect(() => loadConfig({ SKILLFLOW_THINKING_BUDGET_TOKENS: '512' })).toThrow(/at least 1024/);
    expect(loadConfig({ SKILLFLOW_THINKING_BUDGET_TOKENS: '4096' }).thinkingBudgetTokens).toBe(4096);
  });

  it('turns SKILLFLOW_AUTH=off into an explicit opt-out and trims a base URL', () => {
    const config = loadConfig({ SKILLFLOW_AUTH: 'off', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9999/' });
    expect(config.authEnabled).toBe(false);
    expect(config.anthropicBaseUrl).toBe('http://127.0.0.1:9999');
  });
});
