import fs from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { parseDuration } from '../core/skills/durations';
import { closest } from '../core/skills/problems';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export interface Config {
  port: number;
  host: string;
  temporalAddress: string;
  temporalNamespace: string;
  temporalUiPort: number;
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
  maxRounds: number;
  maxEmptyRetries: number;
  maxContinuations: number;
  contextWindowTokens: number;
  contextBudgetFraction: number;
  thinkingBudgetTokens: number;
  checkpointTtlMs: number;
  checkpointOnTimeout: 'cancel' | 'skip';
  maxPlanViolations: number;
  retentionDays: number;
  /** Bearer keys and who they belong to; empty with auth on means a key is generated at start-up. */
  apiKeys: ApiKey[];
  authEnabled: boolean;
  maxMessageChars: number;
  /** Largest request body, in bytes (413 above). */
  bodyLimitBytes: number;
  /** Longest a request may take end to end, except the streams and `?wait=true` (which has its own bound). */
  requestTimeoutMs: number;
  /** How long `POST /v1/sessions/:id/turns?wait=true` holds the request before answering 202. */
  waitTimeoutMs: number;
  /** Requests per minute per API key; 0 turns rate limiting off. */
  rateLimitPerMinute: number;
  /** Origins allowed to call the API from a browser; `*` allows any; empty allows none. */
  corsOrigins: string[];
  /** How long a stream token (for EventSource and WebSocket query strings) stays valid. */
  streamTokenTtlMs: number;
  /** HMAC secret of stream tokens; unset: generated once into the data dir, so API processes sharing it agree. */
  streamTokenSecret?: string;
  /** Live events (message deltas) across processes through Redis pub/sub; unset: the API hosts a local socket. */
  redisUrl?: string;
  /** The local live socket's path; unset: `live.sock` in the data dir (or a short path in the temp dir). */
  liveSocketPath?: string;
  /** Where workers share turn transcripts (redis://, postgres://, file:///dir); unset: files under the data dir. */
  storeUrl?: string;
  /** A turn's entries in the shared store are removed this long after its last model call. */
  storeRetentionHours: number;
  /** On SIGTERM the worker stops polling and gives running activities this long before it cancels them. */
  workerShutdownGraceMs: number;
  workerLogLevel: 'TRACE' | 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  logRequests: boolean;
  /** Port of the API's Prometheus request metrics (`/metrics`); 0: off. */
  apiMetricsPort: number;
  /** Port of the worker's Temporal metrics for Prometheus (`/metrics`); 0: off. */
  workerMetricsPort: number;
  /** Port of the worker's `/healthz` and `/readyz`; 0: off. */
  workerHealthPort: number;
  /** OTLP/HTTP endpoint for OpenTelemetry traces (`OTEL_EXPORTER_OTLP_ENDPOINT`); unset: no tracing. */
  otlpEndpoint?: string;
  /** SKILLFLOW_* variables set in the environment that nothing reads (typos), each with what to do. */
  warnings: string[];
}

export interface ApiKey {
  key: string;
  user: string;
  operator: boolean;
}

type Env = Record<string, string | undefined>;

export const defaultModel = 'claude-sonnet-5-5';

/** SKILLFLOW_* variables read outside lib/config.ts: the CLI's, the build cache, compose's setup job, tests, the topology suite. */
const settingsReadElsewhere = [
  'SKILLFLOW_URL',
  'SKILLFLOW_API_KEY',
  'SKILLFLOW_CACHE_DIR',
  'SKILLFLOW_SEARCH_ATTRIBUTES',
  'SKILLFLOW_RECORD_HISTORIES',
  'SKILLFLOW_TOPOLOGY_POSTGRES_URL',
  'SKILLFLOW_TOPOLOGY_REDIS_URL',
];

/**
 * Reads and validates the whole configuration once; every bad value is reported together, with its fix. Without an
 * explicit environment it reads the process's, after loading `.env` from the working directory (see loadDotEnv).
 */
export function loadConfig(env: Env = environmentWithDotEnv()): Config {
  const problems: string[] = [];
  const read = new Set<string>(settingsReadElsewhere);
  const optional = (name: string) => {
    read.add(name);
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const text = (name: string, fallback: string) => optional(name) ?? fallback;
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
  const fraction = (name: string, fallback: number) => {
    const raw = optional(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!(value > 0 && value <= 1)) {
      problems.push(`${name}=${JSON.stringify(raw)} must be a number above 0 and at most 1; unset it to use ${fallback}.`);
      return fallback;
    }
    return value;
  };
  /** Milliseconds, or a duration with units: 90s, 15m, 24h, 1h30m. */
  const duration = (name: string, fallback: number, min: number, max: number) => {
    const raw = optional(name);
    if (raw === undefined) return fallback;
    const value = /^\d+$/.test(raw) ? Number(raw) : (parseDuration(raw) ?? NaN);
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      problems.push(
        `${name}=${JSON.stringify(raw)} is not a duration from ${formatMs(min)} to ${formatMs(max)}: write milliseconds (${fallback}) or a ` +
          `duration such as 90s, 15m, 24h, 1h30m; unset it to use ${formatMs(fallback)}.`,
      );
      return fallback;
    }
    return value;
  };
  const port = (name: string) => integer(name, 0, 0, 65535);
  const oneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const value = text(name, fallback).toUpperCase();
    if ((allowed as readonly string[]).includes(value)) return value as T;
    problems.push(`${name}=${JSON.stringify(env[name])} must be one of ${allowed.join(', ')}.`);
    return fallback;
  };
  const hostPort = (name: string, fallback: string) => {
    const value = text(name, fallback);
    if (!/^[A-Za-z0-9.\-_[\]:]+:\d{1,5}$/.test(value)) {
      problems.push(`${name}=${JSON.stringify(value)} must be host:port, for example ${fallback}.`);
      return fallback;
    }
    return value;
  };
  const url = (name: string, unsetMeans = 'unset it to use the Anthropic API') => {
    const value = optional(name);
    if (value === undefined) return undefined;
    try {
      const parsed = new URL(value);
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('protocol');
      return value.replace(/\/+$/, '');
    } catch {
      problems.push(`${name}=${JSON.stringify(value)} is not an http(s) URL; ${unsetMeans}.`);
      return undefined;
    }
  };

  const config: Config = {
    port: integer('PORT', 3000, 0, 65535),
    host: text('HOST', '127.0.0.1'),
    temporalAddress: hostPort('TEMPORAL_ADDRESS', 'localhost:7233'),
    temporalNamespace: text('TEMPORAL_NAMESPACE', 'default'),
    temporalUiPort: integer('SKILLFLOW_TEMPORAL_UI_PORT', 8233, 1, 65535),
    taskQueue: text('SKILLFLOW_TASK_QUEUE', 'skillflow'),
    dataDir: path.resolve(text('SKILLFLOW_DATA_DIR', './.data')),
    skillsDir: path.resolve(text('SKILLFLOW_SKILLS_DIR', './skills')),
    anthropicApiKey: optional('ANTHROPIC_API_KEY'),
    anthropicBaseUrl: url('ANTHROPIC_BASE_URL'),
    model: text('SKILLFLOW_MODEL', defaultModel),
    modelMaxTokens: integer('SKILLFLOW_MODEL_MAX_TOKENS', 8192, 1, 128_000),
    modelMaxAttempts: integer('SKILLFLOW_MODEL_MAX_ATTEMPTS', 6, 1, 100),
    modelTimeoutMs: duration('SKILLFLOW_MODEL_TIMEOUT_MS', 600_000, 1_000, 3_600_000),
    historyWindow: integer('SKILLFLOW_HISTORY_WINDOW', 10, 0, 1000),
    maxRounds: integer('SKILLFLOW_MAX_ROUNDS', 40, 1, 10_000),
    maxEmptyRetries: integer('SKILLFLOW_MAX_EMPTY_RETRIES', 2, 0, 20),
    maxContinuations: integer('SKILLFLOW_MAX_CONTINUATIONS', 3, 0, 20),
    contextWindowTokens: integer('SKILLFLOW_CONTEXT_WINDOW_TOKENS', 200_000, 1_000, 10_000_000),
    contextBudgetFraction: fraction('SKILLFLOW_CONTEXT_BUDGET', 0.5),
    thinkingBudgetTokens: integer('SKILLFLOW_THINKING_BUDGET_TOKENS', 0, 0, 1_000_000),
    checkpointTtlMs: duration('SKILLFLOW_CHECKPOINT_TTL_MS', 24 * 3600_000, 0, 365 * 24 * 3600_000),
    maxPlanViolations: integer('SKILLFLOW_MAX_PLAN_VIOLATIONS', 5, 1, 1000),
    checkpointOnTimeout: oneOf('SKILLFLOW_CHECKPOINT_ON_TIMEOUT', ['CANCEL', 'SKIP'] as const, 'CANCEL').toLowerCase() as 'cancel' | 'skip',
    retentionDays: integer('SKILLFLOW_RETENTION_DAYS', 30, 1, 3650),
    apiKeys: [],
    authEnabled: true,
    maxMessageChars: integer('SKILLFLOW_MAX_MESSAGE_CHARS', 100_000, 1, 10_000_000),
    bodyLimitBytes: integer('SKILLFLOW_BODY_LIMIT_BYTES', 1024 * 1024, 1024, 100 * 1024 * 1024),
    requestTimeoutMs: duration('SKILLFLOW_REQUEST_TIMEOUT_MS', 30_000, 1_000, 3_600_000),
    waitTimeoutMs: duration('SKILLFLOW_WAIT_TIMEOUT_MS', 60_000, 100, 3_600_000),
    rateLimitPerMinute: integer('SKILLFLOW_RATE_LIMIT', 60_000, 0, 100_000_000),
    corsOrigins: parseCorsOrigins(optional('SKILLFLOW_CORS_ORIGINS'), problems),
    streamTokenTtlMs: duration('SKILLFLOW_STREAM_TOKEN_TTL_MS', 300_000, 1_000, 24 * 3600_000),
    streamTokenSecret: optional('SKILLFLOW_STREAM_TOKEN_SECRET'),
    redisUrl: redisUrl(optional('SKILLFLOW_REDIS_URL'), problems),
    liveSocketPath: optional('SKILLFLOW_LIVE_SOCKET'),
    storeUrl: storeUrl(optional('SKILLFLOW_STORE_URL'), problems),
    storeRetentionHours: integer('SKILLFLOW_STORE_RETENTION_HOURS', 168, 1, 24 * 3650),
    workerShutdownGraceMs: duration('SKILLFLOW_WORKER_SHUTDOWN_GRACE_MS', 50_000, 0, 3_600_000),
    logRequests: oneOf('SKILLFLOW_LOG_REQUESTS', ['0', '1'] as const, '0') === '1',
    workerLogLevel: oneOf('SKILLFLOW_WORKER_LOG_LEVEL', ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'] as const, 'WARN'),
    apiMetricsPort: port('SKILLFLOW_API_METRICS_PORT'),
    workerMetricsPort: port('SKILLFLOW_WORKER_METRICS_PORT'),
    workerHealthPort: port('SKILLFLOW_WORKER_HEALTH_PORT'),
    otlpEndpoint: url('OTEL_EXPORTER_OTLP_ENDPOINT', 'unset it to turn tracing off'),
    warnings: [],
  };
  if (config.thinkingBudgetTokens > 0 && (config.thinkingBudgetTokens < 1024 || config.thinkingBudgetTokens >= config.modelMaxTokens)) {
    problems.push(
      `SKILLFLOW_THINKING_BUDGET_TOKENS=${config.thinkingBudgetTokens} must be at least 1024 and below SKILLFLOW_MODEL_MAX_TOKENS (${config.modelMaxTokens}), or 0 to turn thinking off.`,
    );
  }
  const apiKeys = parseApiKeys(optional('SKILLFLOW_API_KEYS'), problems);
  const auth = text('SKILLFLOW_AUTH', 'on');
  if (auth !== 'on' && auth !== 'off') problems.push(`SKILLFLOW_AUTH=${JSON.stringify(auth)} must be "on" or "off".`);
  config.apiKeys = apiKeys;
  config.authEnabled = auth !== 'off';
  config.warnings = unknownSettings(env, read);
  if (problems.length > 0) {
    throw new ConfigError(`Invalid configuration (see .env.example):\n  - ${problems.join('\n  - ')}`);
  }
  return config;
}

const settingPrefix = 'SKILLFLOW_';

/** A SKILLFLOW_* variable nothing reads is almost always a typo (SKILLFLOW_MAX_ROUND): say so, with the likely name. */
function unknownSettings(env: Env, known: Set<string>): string[] {
  const names = [...known];
  const lowered = names.map((name) => name.toLowerCase());
  return Object.keys(env)
    .filter((name) => name.startsWith(settingPrefix) && !name.startsWith(`${settingPrefix}TEST_`) && !known.has(name))
    .sort()
    .map((name) => {
      const match = closest(name, lowered);
      const near = match === null ? null : names[lowered.indexOf(match)];
      return `${name} is set but skillflow reads no such variable; ${near ? `did you mean ${near}?` : 'see .env.example for the settings.'}`;
    });
}

function formatMs(ms: number): string {
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/**
 * Loads `.env` from the working directory into the process's environment, once, when the file exists. Variables
 * already set win, so the real environment always overrides the file. Returns the process's environment.
 */
export function environmentWithDotEnv(cwd = process.cwd()): NodeJS.ProcessEnv {
  if (dotEnvLoaded) return process.env;
  dotEnvLoaded = true;
  const file = path.join(cwd, '.env');
  if (!fs.existsSync(file)) return process.env;
  for (const [name, value] of Object.entries(parseEnv(fs.readFileSync(file, 'utf8')))) {
    if (process.env[name] === undefined) process.env[name] = value;
  }
  return process.env;
}
let dotEnvLoaded = false;

/** `https://app.example.com,http://localhost:5173`, or `*` for any origin. */
function parseCorsOrigins(raw: string | undefined, problems: string[]): string[] {
  if (raw === undefined) return [];
  const origins = raw.split(',').map((part) => part.trim().replace(/\/+$/, '')).filter(Boolean);
  for (const origin of origins) {
    if (origin !== '*' && !/^https?:\/\/[^/\s]+$/.test(origin)) {
      problems.push(`SKILLFLOW_CORS_ORIGINS entry ${JSON.stringify(origin)} must be an origin like https://app.example.com (no path), or *.`);
    }
  }
  return origins;
}

function redisUrl(raw: string | undefined, problems: string[]): string | undefined {
  if (raw === undefined) return undefined;
  if (!/^rediss?:\/\/\S+$/.test(raw)) {
    problems.push(`SKILLFLOW_REDIS_URL=${JSON.stringify(raw)} must be a redis:// or rediss:// URL, for example redis://localhost:6379.`);
    return undefined;
  }
  return raw;
}

function storeUrl(raw: string | undefined, problems: string[]): string | undefined {
  if (raw === undefined) return undefined;
  let parsed: URL | undefined;
  try {
    parsed = new URL(raw);
  } catch {
    parsed = undefined;
  }
  const schemes = ['redis:', 'rediss:', 'postgres:', 'postgresql:', 'file:'];
  if (!parsed || !schemes.includes(parsed.protocol) || (parsed.protocol === 'file:' && parsed.pathname.length < 2)) {
    problems.push(
      `SKILLFLOW_STORE_URL=${JSON.stringify(raw.replace(/\/\/[^@/]*@/, '//***@'))} must be a redis://, postgres:// or file:///absolute/dir URL, ` +
        'for example redis://localhost:6379 or postgres://user@db:5432/skillflow; unset it to keep the store in the data dir.',
    );
    return undefined;
  }
  return raw;
}

/** `key=user,key=user:operator` */
function parseApiKeys(raw: string | undefined, problems: string[]): ApiKey[] {
  if (raw === undefined) return [];
  const keys: ApiKey[] = [];
  for (const entry of raw.split(',').map((part) => part.trim()).filter(Boolean)) {
    const match = /^([^=\s]{16,})=([A-Za-z0-9._@-]{1,64})(:operator)?$/.exec(entry);
    if (!match) {
      problems.push(
        `SKILLFLOW_API_KEYS entry ${JSON.stringify(entry.slice(0, 8) + '...')} must look like key=user or key=user:operator, ` +
          'with a key of at least 16 characters and a user of letters, digits, . _ @ -.',
      );
      continue;
    }
    keys.push({ key: match[1], user: match[2], operator: match[3] !== undefined });
  }
  return keys;
}
