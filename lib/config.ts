import path from 'node:path';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export interface Config {
  port: number;
  host: string;
  temporalAddress: string;
  temporalNamespace: string;
  taskQueue: string;
  dataDir: string;
  skillsDir: string;
  anthropicApiKey?: string;
  anthropicBaseUrl?: string;
  model: string;
  modelMaxTokens: number;
  modelMaxAttempts: number;
  modelTimeoutMs: number;
  historyWindow: number;
  retentionDays: number;
}

type Env = Record<string, string | undefined>;

export const defaultModel = 'claude-sonnet-5-5';

/** Reads and validates the whole configuration once; every bad value is reported together, with its fix. */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const text = (name: string, fallback: string) => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? fallback : value;
  };
  const optional = (name: string) => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const integer = (name: string, fallback: number, min: number, max: number) => {
    const raw = optional(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      problems.push(`${name}=${JSON.stringify(raw)} is not a whole number from ${min} to ${max}; unset it to use ${fallback}.`);
      return fallback;
    }
    return value;
  };
  const hostPort = (name: string, fallback: string) => {
    const value = text(name, fallback);
    if (!/^[A-Za-z0-9.\-_[\]:]+:\d{1,5}$/.test(value)) {
      problems.push(`${name}=${JSON.stringify(value)} must be host:port, for example ${fallback}.`);
      return fallback;
    }
    return value;
  };
  const url = (name: string) => {
    const value = optional(name);
    if (value === undefined) return undefined;
    try {
      const parsed = new URL(value);
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('protocol');
      return value.replace(/\/+$/, '');
    } catch {
      problems.push(`${name}=${JSON.stringify(value)} is not an http(s) URL; unset it to use the Anthropic API.`);
      return undefined;
    }
  };

  const config: Config = {
    port: integer('PORT', 3000, 0, 65535),
    host: text('HOST', '127.0.0.1'),
    temporalAddress: hostPort('TEMPORAL_ADDRESS', 'localhost:7233'),
    temporalNamespace: text('TEMPORAL_NAMESPACE', 'default'),
    taskQueue: text('SKILLFLOW_TASK_QUEUE', 'skillflow'),
    dataDir: path.resolve(text('SKILLFLOW_DATA_DIR', './.data')),
    skillsDir: path.resolve(text('SKILLFLOW_SKILLS_DIR', './skills')),
    anthropicApiKey: optional('ANTHROPIC_API_KEY'),
    anthropicBaseUrl: url('ANTHROPIC_BASE_URL'),
    model: text('SKILLFLOW_MODEL', defaultModel),
    modelMaxTokens: integer('SKILLFLOW_MODEL_MAX_TOKENS', 8192, 1, 128_000),
    modelMaxAttempts: integer('SKILLFLOW_MODEL_MAX_ATTEMPTS', 6, 1, 100),
    modelTimeoutMs: integer('SKILLFLOW_MODEL_TIMEOUT_MS', 600_000, 1_000, 3_600_000),
    historyWindow: integer('SKILLFLOW_HISTORY_WINDOW', 10, 0, 1000),
    retentionDays: integer('SKILLFLOW_RETENTION_DAYS', 30, 1, 3650),
  };
  if (problems.length > 0) {
    throw new ConfigError(`Invalid configuration (see .env.example):\n  - ${problems.join('\n  - ')}`);
  }
  return config;
}
