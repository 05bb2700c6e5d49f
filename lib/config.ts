import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { defaultConversationBytes } from '../core/payload-references';
import { defaultHistoryWindowBytes, maxHistoryWindowBytes } from '../core/session-records';
import { defaultMaxInvocationsPerResponse, defaultMaxInvocationsPerTurn } from '../core/settings';
import { efforts, type Effort } from '../core/thinking';
import { grantSyntax, parseGrant } from '../core/tools/grants';
import { defaultMaxToolCatalogBytes, maxToolCatalogBytesLimit } from './tools/catalog-bound';
import { parseHostPattern } from './tools/host-patterns';
import { SettingsReader, type Env } from './settings-reader';
import { temporalProfileFrom, type TemporalProfile } from './temporal-connection';

/** A message of 256 KiB, and a turn's input (message and history window) stays well within Temporal's 2 MiB. */
export const defaultMaxMessageBytes = 256 * 1024;
const maxMessageBytesLimit = 1024 * 1024;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * The worker's workflow cache: a workflow waiting at a checkpoint costs the worker about 0.6 MB of RSS (docs/benchmarks.md,
 * the worker's memory and tuning: 411 MB with 20 cached, 644 MB with 400, 300 exams paused), so 150 is about 90 MB of
 * it, and holds the 100 workflows of 50 exams at once without eviction. A workflow beyond it is evicted and replays its
 * history when it wakes.
 */
export const defaultMaxCachedWorkflows = 150;

/**
 * The old-space limit, in MB, of each of the worker's V8 heaps (its main thread's and its workflow thread's): what V8
 * may grow each heap to. Sized in docs/benchmarks.md (worker memory) from a worker whose cache holds long
 * conversations, with margin; a lower limit also makes V8 grow a heap by a smaller factor, which is most of what it saves.
 */
export const defaultWorkerHeapMb = 512;
/** The least non-zero heap limit the settings accept: an idle worker's main thread already holds 40-70 MB of heap. */
export const minWorkerHeapMb = 128;

export interface Config {
  port: number;
  host: string;
  temporalAddress: string;
  temporalNamespace: string;
  /** How to reach Temporal: the address with TLS, an API key and gRPC metadata, from TEMPORAL_* and a TOML profile. */
  temporal: TemporalProfile;
  temporalUiPort: number;
  /** The Temporal UI's address, for the web app's links to a run (SKILLFLOW_TEMPORAL_UI_URL; npm start sets it for its dev server). */
  temporalUiUrl?: string;
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
  /** Bytes (UTF-8) of the earlier exchanges a new turn sees, at most. */
  historyWindowBytes: number;
  maxRounds: number;
  maxEmptyRetries: number;
  maxContinuations: number;
  contextWindowTokens: number;
  contextBudgetFraction: number;
  /** Whether model calls ask for thinking (SKILLFLOW_THINKING; on by default when a budget is set). */
  thinking: boolean;
  /** For models that take only the budget form (4.5 and older); 0: half of SKILLFLOW_MODEL_MAX_TOKENS. */
  thinkingBudgetTokens: number;
  /** `output_config.effort` for models that take it, unless a skill names its own; unset: the model's default. */
  effort?: Effort;
  /** How long a checkpoint waits unless its skill says otherwise; 0 waits until someone answers. */
  checkpointTtlMs: number;
  checkpointOnTimeout: 'cancel' | 'skip';
  maxPlanViolations: number;
  /** How deep skill runs may nest (invoke_skill): 1 for a skill the turn invokes, +1 per nesting. */
  maxSkillDepth: number;
  /** invoke_skill calls one model response may make. */
  maxInvocationsPerResponse: number;
  /** invoke_skill calls one turn may make, at any depth (its skill runs' included). */
  maxInvocationsPerTurn: number;
  retentionDays: number;
  /** Bearer keys and who they belong to; empty with auth on means a key is generated at start-up. */
  apiKeys: ApiKey[];
  authEnabled: boolean;
  maxMessageChars: number;
  /** A message's (and a checkpoint answer's) size as UTF-8, at most. */
  maxMessageBytes: number;
  /** Largest request body, in bytes (413 above). */
  bodyLimitBytes: number;
  /** Longest a request may take end to end, except the streams and `?wait=true` (which has its own bound). */
  requestTimeoutMs: number;
  /** How long `POST /v1/sessions/:id/turns?wait=true` holds the request before answering 202. */
  waitTimeoutMs: number;
  /** Requests per minute per user, every key and stream token of the user together (WebSocket frames included); 0 turns rate limiting off. */
  rateLimitPerMinute: number;
  /** Per client address (an IPv6 address by its /64) and minute: failed authentications and readiness probes (429 beyond); 0 turns it off. */
  addressRateLimitPerMinute: number;
  /** Proxies whose X-Forwarded-For names the client (addresses and CIDR ranges); empty: the peer is the client. */
  trustedProxies: string[];
  /** Open SSE and WebSocket streams per user (API keys and stream tokens alike), and per API process; 429 beyond. */
  maxStreamsPerKey: number;
  maxStreams: number;
  /** A session nobody used for this long is closed and removed; 0 keeps sessions until they are deleted. */
  sessionIdleMs: number;
  /** Open sessions per user (429 beyond); 0 is no limit. */
  maxSessionsPerUser: number;
  /** Model tokens per user per UTC day (input, output and cache); 0 is no limit. */
  userDailyTokens: number;
  /** Origins allowed to call the API from a browser; `*` allows any; empty allows none. */
  corsOrigins: string[];
  /** How long a stream token (for EventSource and WebSocket query strings) stays valid. */
  streamTokenTtlMs: number;
  /** Whether the API serves the web app at /app (SKILLFLOW_APP). */
  appEnabled: boolean;
  /** How long the access token a page gets for an answer link (POST /v1/links/exchange) stays valid. */
  linkAccessTtlMs: number;
  /** HMAC secret of stream tokens; unset: generated once into the secrets dir, so API processes sharing it agree. */
  streamTokenSecret?: string;
  /** Where the API keeps the secrets it generates (the API key, the stream-token secret); default: the data dir. */
  secretsDir: string;
  /** Live events, rate limits and quotas shared across processes through Redis; unset: the API hosts a local socket. */
  redisUrl?: string;
  /** Prefix of every Redis key and channel, so deployments sharing a Redis stay apart. */
  redisPrefix: string;
  /** The local live socket's path; unset: `live.sock` in the data dir (or a short path in the temp dir). */
  liveSocketPath?: string;
  /** Where workers share turn transcripts (redis://, postgres://, file:///dir); unset: files under the data dir. */
  storeUrl?: string;
  /** A turn's entries in the shared store are removed this long after its last model call. */
  storeRetentionHours: number;
  /** On SIGTERM the worker stops polling and gives running activities this long before it cancels them. */
  workerShutdownGraceMs: number;
  workerLogLevel: 'TRACE' | 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  /** Workflows the worker keeps in memory (sticky cache); an evicted turn replays its history when it wakes. */
  workerMaxCachedWorkflows: number;
  /** Old-space limit in MB of each of the worker's V8 heaps (main and workflow thread); 0: V8's own (a share of RAM). */
  workerHeapMb: number;
  /** Activity slots a workflow task may reserve for eager execution (0: off); the server must allow it. */
  workerEagerActivities: number;
  logRequests: boolean;
  /** Port of the API's Prometheus request metrics (`/metrics`); 0: off. */
  apiMetricsPort: number;
  /** Port of the worker's Temporal metrics for Prometheus (`/metrics`); 0: off. */
  workerMetricsPort: number;
  /** Port of the worker's `/healthz` and `/readyz`; 0: off. */
  workerHealthPort: number;
  /** OTLP/HTTP endpoint for OpenTelemetry traces (`OTEL_EXPORTER_OTLP_ENDPOINT`); unset: no tracing. */
  otlpEndpoint?: string;
  /** Worker: the registered tools a turn offers while no skill is active, as grants (docs/tools.md); empty by default. */
  defaultTools: string[];
  /** Worker: a folder of tool modules loaded at start-up (docs/tools.md); a missing folder holds none. */
  toolsDir: string;
  /** Worker: the JSON file that lists MCP servers (docs/tools.md); unset: no MCP tools. */
  mcpConfigPath?: string;
  /** Worker: how large the tool catalog (the JSON of every registered tool's spec) may grow; tools past it are refused. */
  toolCatalogMaxBytes: number;
  /** Worker: the hosts http_fetch may fetch from (`example.com`, `*.example.com`, `10.0.0.5:8080`); empty: none. */
  httpFetchHosts: string[];
  /** Worker: the most http_fetch reads of one response body (bytes, after decompression). */
  httpFetchMaxBytes: number;
  /** Worker: one http_fetch call's time limit, redirects included. */
  httpFetchTimeoutMs: number;
  /** The codec endpoint the Temporal UI calls to show what history holds by reference (docs/operators.md). */
  codec: CodecConfig;
  /** SKILLFLOW_* variables set in the environment that nothing reads (typos), each with what to do. */
  warnings: string[];
  /** SKILLFLOW_AUTH=off on a non-loopback HOST, allowed on purpose by SKILLFLOW_UNAUTHENTICATED_NETWORK=allow. */
  unauthenticatedNetwork: boolean;
}

export interface CodecConfig {
  host: string;
  port: number;
  /** Browser origins of the Temporal UI, answered by CORS; default: the dev server's UI on localhost and 127.0.0.1. */
  uiOrigins: string[];
  /** The secret path segment of the UI's endpoint (`/ui/<token>`); unset: generated once into the secrets dir. */
  uiToken?: string;
  /** Largest request body, in bytes (413 above). */
  maxBodyBytes: number;
  /** The most of a model call's conversation the codec shows whole, in bytes of JSON; the earliest messages beyond it are left out. */
  conversationBytes: number;
}

/** A secret used as an HMAC key must carry at least this many bytes. */
export const minSecretBytes = 32;

export interface ApiKey {
  key: string;
  user: string;
  operator: boolean;
}

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
  const reader = new SettingsReader(env, settingsReadElsewhere);
  const temporal = temporalSettings(reader);
  const config: Config = {
    ...processSettings(reader, temporal),
    ...turnSettings(reader),
    ...apiSettings(reader),
    ...sharedServiceSettings(reader, temporal),
    ...workerSettings(reader),
    ...toolSettings(reader),
    codec: codecSettings(reader),
    warnings: [],
    unauthenticatedNetwork: false,
  };
  settleCodecOrigins(reader, config);
  settleThinking(reader, config);
  settleAuth(reader, config);
  config.warnings = reader.unreadSettings();
  if (reader.problems.length > 0) {
    throw new ConfigError(`Invalid configuration (see .env.example):\n  - ${reader.problems.join('\n  - ')}`);
  }
  return config;
}

/** Only what an operator's Temporal client needs (`skillflow legacy`): the connection, namespace and task queue. */
export function loadTemporalTarget(env: Env = environmentWithDotEnv()): {
  temporal: TemporalProfile;
  taskQueue: string;
} {
  const reader = new SettingsReader(env, settingsReadElsewhere);
  const temporal = temporalSettings(reader);
  const taskQueue = reader.text('SKILLFLOW_TASK_QUEUE', 'skillflow');
  if (reader.problems.length > 0) {
    throw new ConfigError(`Invalid Temporal settings (see .env.example):\n  - ${reader.problems.join('\n  - ')}`);
  }
  return { temporal, taskQueue };
}

/** Temporal's standard client configuration (TEMPORAL_* and a TOML profile), its address checked. */
function temporalSettings(reader: SettingsReader): TemporalProfile {
  const temporal = temporalProfileFrom(reader.optional, reader.env, reader.problems);
  if (!/^[A-Za-z0-9.\-_[\]:]+:\d{1,5}$/.test(temporal.connection.address)) {
    reader.problems.push(
      `TEMPORAL_ADDRESS=${JSON.stringify(temporal.connection.address)} must be host:port, for example localhost:7233 (read from ${temporal.source}).`,
    );
  }
  return temporal;
}

function processSettings(reader: SettingsReader, temporal: TemporalProfile) {
  return {
    port: reader.integer('PORT', 3000, 0, 65535),
    host: reader.text('HOST', '127.0.0.1'),
    temporalAddress: temporal.connection.address,
    temporalNamespace: temporal.namespace,
    temporal,
    temporalUiPort: reader.integer('SKILLFLOW_TEMPORAL_UI_PORT', 8233, 1, 65535),
    taskQueue: reader.text('SKILLFLOW_TASK_QUEUE', 'skillflow'),
    dataDir: path.resolve(reader.text('SKILLFLOW_DATA_DIR', './.data')),
    skillsDir: path.resolve(reader.text('SKILLFLOW_SKILLS_DIR', './skills')),
  };
}

/** The model and what a turn may do (they travel in each turn's settings). */
function turnSettings(reader: SettingsReader) {
  return {
    anthropicApiKey: reader.optional('ANTHROPIC_API_KEY'),
    anthropicBaseUrl: reader.url('ANTHROPIC_BASE_URL'),
    model: reader.text('SKILLFLOW_MODEL', defaultModel),
    modelMaxTokens: reader.integer('SKILLFLOW_MODEL_MAX_TOKENS', 8192, 1, 128_000),
    modelMaxAttempts: reader.integer('SKILLFLOW_MODEL_MAX_ATTEMPTS', 6, 1, 100),
    modelTimeoutMs: reader.duration('SKILLFLOW_MODEL_TIMEOUT_MS', 600_000, 1_000, 3_600_000),
    historyWindow: reader.integer('SKILLFLOW_HISTORY_WINDOW', 10, 0, 1000),
    historyWindowBytes: reader.integer(
      'SKILLFLOW_HISTORY_WINDOW_BYTES',
      defaultHistoryWindowBytes,
      0,
      maxHistoryWindowBytes,
    ),
    maxRounds: reader.integer('SKILLFLOW_MAX_ROUNDS', 40, 1, 10_000),
    maxEmptyRetries: reader.integer('SKILLFLOW_MAX_EMPTY_RETRIES', 2, 0, 20),
    maxContinuations: reader.integer('SKILLFLOW_MAX_CONTINUATIONS', 3, 0, 20),
    contextWindowTokens: reader.integer('SKILLFLOW_CONTEXT_WINDOW_TOKENS', 200_000, 1_000, 10_000_000),
    contextBudgetFraction: reader.fraction('SKILLFLOW_CONTEXT_BUDGET', 0.5),
    thinking: false,
    thinkingBudgetTokens: reader.integer('SKILLFLOW_THINKING_BUDGET_TOKENS', 0, 0, 1_000_000),
    effort: reader.optionalOneOf('SKILLFLOW_EFFORT', efforts),
    ...checkpointAndSkillSettings(reader),
  };
}

function checkpointAndSkillSettings(reader: SettingsReader) {
  return {
    checkpointTtlMs: reader.duration('SKILLFLOW_CHECKPOINT_TTL_MS', 0, 0, 365 * 24 * 3600_000),
    maxPlanViolations: reader.integer('SKILLFLOW_MAX_PLAN_VIOLATIONS', 5, 1, 1000),
    maxSkillDepth: reader.integer('SKILLFLOW_MAX_SKILL_DEPTH', 3, 1, 10),
    maxInvocationsPerResponse: reader.integer(
      'SKILLFLOW_MAX_INVOCATIONS_PER_RESPONSE',
      defaultMaxInvocationsPerResponse,
      1,
      100,
    ),
    maxInvocationsPerTurn: reader.integer(
      'SKILLFLOW_MAX_INVOCATIONS_PER_TURN',
      defaultMaxInvocationsPerTurn,
      1,
      10_000,
    ),
    checkpointOnTimeout: reader
      .oneOf('SKILLFLOW_CHECKPOINT_ON_TIMEOUT', ['CANCEL', 'SKIP'] as const, 'CANCEL')
      .toLowerCase() as 'cancel' | 'skip',
    retentionDays: reader.integer('SKILLFLOW_RETENTION_DAYS', 30, 1, 3650),
  };
}

/** The API's limits, streams and secrets (its keys and auth are settled last: settleAuth). */
function apiSettings(reader: SettingsReader) {
  const { problems, optional } = reader;
  return {
    apiKeys: [],
    authEnabled: true,
    maxMessageChars: reader.integer('SKILLFLOW_MAX_MESSAGE_CHARS', 100_000, 1, 10_000_000),
    maxMessageBytes: reader.integer('SKILLFLOW_MAX_MESSAGE_BYTES', defaultMaxMessageBytes, 1, maxMessageBytesLimit),
    bodyLimitBytes: reader.integer('SKILLFLOW_BODY_LIMIT_BYTES', 1024 * 1024, 1024, 100 * 1024 * 1024),
    requestTimeoutMs: reader.duration('SKILLFLOW_REQUEST_TIMEOUT_MS', 30_000, 1_000, 3_600_000),
    waitTimeoutMs: reader.duration('SKILLFLOW_WAIT_TIMEOUT_MS', 60_000, 100, 3_600_000),
    rateLimitPerMinute: reader.integer('SKILLFLOW_RATE_LIMIT', 60_000, 0, 100_000_000),
    addressRateLimitPerMinute: reader.integer('SKILLFLOW_ADDRESS_RATE_LIMIT', 120, 0, 100_000_000),
    trustedProxies: addressRanges(optional('SKILLFLOW_TRUSTED_PROXIES'), problems),
    maxStreamsPerKey: reader.integer('SKILLFLOW_MAX_STREAMS_PER_KEY', 32, 1, 1_000_000),
    maxStreams: reader.integer('SKILLFLOW_MAX_STREAMS', 1000, 1, 1_000_000),
    sessionIdleMs: reader.duration('SKILLFLOW_SESSION_IDLE_MS', 30 * 24 * 3600_000, 0, 10 * 365 * 24 * 3600_000),
    maxSessionsPerUser: reader.integer('SKILLFLOW_MAX_SESSIONS_PER_USER', 100, 0, 1_000_000),
    userDailyTokens: reader.integer('SKILLFLOW_USER_DAILY_TOKENS', 5_000_000, 0, Number.MAX_SAFE_INTEGER),
    corsOrigins: parseCorsOrigins(optional('SKILLFLOW_CORS_ORIGINS'), problems),
    streamTokenTtlMs: reader.duration('SKILLFLOW_STREAM_TOKEN_TTL_MS', 300_000, 1_000, 24 * 3600_000),
    appEnabled: reader.oneOf('SKILLFLOW_APP', ['ON', 'OFF'] as const, 'ON') === 'ON',
    linkAccessTtlMs: reader.duration('SKILLFLOW_LINK_ACCESS_TTL_MS', 900_000, 60_000, 24 * 3600_000),
    streamTokenSecret: secret('SKILLFLOW_STREAM_TOKEN_SECRET', optional('SKILLFLOW_STREAM_TOKEN_SECRET'), problems),
    secretsDir: path.resolve(reader.text('SKILLFLOW_SECRETS_DIR', reader.text('SKILLFLOW_DATA_DIR', './.data'))),
  };
}

/** Redis and the shared store, which every process of a deployment reaches. */
function sharedServiceSettings(reader: SettingsReader, temporal: TemporalProfile) {
  const { problems, optional } = reader;
  return {
    redisUrl: redisUrl(optional('SKILLFLOW_REDIS_URL'), problems),
    redisPrefix: redisPrefix(optional('SKILLFLOW_REDIS_PREFIX'), temporal.namespace, problems),
    liveSocketPath: optional('SKILLFLOW_LIVE_SOCKET'),
    storeUrl: storeUrl(optional('SKILLFLOW_STORE_URL'), problems),
    storeRetentionHours: reader.integer('SKILLFLOW_STORE_RETENTION_HOURS', 168, 1, 24 * 3650),
  };
}

/** The worker's process, the ports and traces of both processes, and the Temporal UI's address for links to it. */
function workerSettings(reader: SettingsReader) {
  return {
    workerShutdownGraceMs: reader.duration('SKILLFLOW_WORKER_SHUTDOWN_GRACE_MS', 50_000, 0, 3_600_000),
    logRequests: reader.oneOf('SKILLFLOW_LOG_REQUESTS', ['0', '1'] as const, '0') === '1',
    workerLogLevel: reader.oneOf(
      'SKILLFLOW_WORKER_LOG_LEVEL',
      ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'] as const,
      'WARN',
    ),
    workerMaxCachedWorkflows: reader.integer(
      'SKILLFLOW_WORKER_MAX_CACHED_WORKFLOWS',
      defaultMaxCachedWorkflows,
      0,
      100_000,
    ),
    workerEagerActivities: reader.integer('SKILLFLOW_WORKER_EAGER_ACTIVITIES', 3, 0, 100),
    workerHeapMb: heapLimit('SKILLFLOW_WORKER_HEAP_MB', reader),
    apiMetricsPort: reader.port('SKILLFLOW_API_METRICS_PORT'),
    workerMetricsPort: reader.port('SKILLFLOW_WORKER_METRICS_PORT'),
    workerHealthPort: reader.port('SKILLFLOW_WORKER_HEALTH_PORT'),
    otlpEndpoint: reader.url('OTEL_EXPORTER_OTLP_ENDPOINT', 'unset it to turn tracing off'),
    temporalUiUrl: reader.url(
      'SKILLFLOW_TEMPORAL_UI_URL',
      'unset it to leave links to the Temporal UI out of the web app',
    ),
  };
}

function heapLimit(name: string, reader: SettingsReader): number {
  const value = reader.integer(name, defaultWorkerHeapMb, 0, 1_048_576);
  if (value === 0 || value >= minWorkerHeapMb) return value;
  reader.problems.push(
    `${name}=${value} is below ${minWorkerHeapMb} MB, less than an idle worker needs; set ${minWorkerHeapMb} or more, or 0 for V8's own limit.`,
  );
  return defaultWorkerHeapMb;
}

/** The worker's registered tools: default grants, tool modules, MCP servers, the catalog's bound, http_fetch. */
function toolSettings(reader: SettingsReader) {
  const { problems, optional } = reader;
  return {
    defaultTools: grantList(optional('SKILLFLOW_DEFAULT_TOOLS'), problems),
    toolsDir: path.resolve(reader.text('SKILLFLOW_TOOLS_DIR', './tools')),
    mcpConfigPath: optionalPath(optional('SKILLFLOW_MCP_CONFIG')),
    toolCatalogMaxBytes: reader.integer(
      'SKILLFLOW_TOOL_CATALOG_MAX_BYTES',
      defaultMaxToolCatalogBytes,
      16 * 1024,
      maxToolCatalogBytesLimit,
    ),
    httpFetchHosts: hostList(optional('SKILLFLOW_HTTP_FETCH_HOSTS'), problems),
    httpFetchMaxBytes: reader.integer('SKILLFLOW_HTTP_FETCH_MAX_BYTES', 262_144, 1024, 10 * 1024 * 1024),
    httpFetchTimeoutMs: reader.duration('SKILLFLOW_HTTP_FETCH_TIMEOUT_MS', 10_000, 500, 120_000),
  };
}

/** The codec endpoint; its UI origins are settled once the UI's port is known (settleCodecOrigins). */
function codecSettings(reader: SettingsReader): CodecConfig {
  const { problems, optional } = reader;
  return {
    host: reader.text('SKILLFLOW_CODEC_HOST', '127.0.0.1'),
    port: reader.integer('SKILLFLOW_CODEC_PORT', 8234, 1, 65535),
    uiOrigins: [],
    uiToken: pathToken(
      'SKILLFLOW_CODEC_UI_TOKEN',
      secret('SKILLFLOW_CODEC_UI_TOKEN', optional('SKILLFLOW_CODEC_UI_TOKEN'), problems),
      problems,
    ),
    maxBodyBytes: reader.integer('SKILLFLOW_CODEC_MAX_BODY_BYTES', 8 * 1024 * 1024, 1024, 256 * 1024 * 1024),
    conversationBytes: reader.integer(
      'SKILLFLOW_CODEC_CONVERSATION_BYTES',
      defaultConversationBytes,
      1024,
      64 * 1024 * 1024,
    ),
  };
}

/** The Temporal UI origins the codec answers: the configured ones, or the dev server's UI on localhost and 127.0.0.1. */
function settleCodecOrigins(reader: SettingsReader, config: Config): void {
  const raw = reader.optional('SKILLFLOW_CODEC_UI_ORIGINS');
  const uiOrigins = parseCorsOrigins(raw, reader.problems, 'SKILLFLOW_CODEC_UI_ORIGINS');
  config.codec.uiOrigins =
    uiOrigins.length > 0
      ? uiOrigins
      : [`http://localhost:${config.temporalUiPort}`, `http://127.0.0.1:${config.temporalUiPort}`];
}

/** Thinking is on by default when a budget is set; a budget must fit below the output limit. */
function settleThinking(reader: SettingsReader, config: Config): void {
  const budget = config.thinkingBudgetTokens;
  config.thinking = reader.oneOf('SKILLFLOW_THINKING', ['ON', 'OFF'] as const, budget > 0 ? 'ON' : 'OFF') === 'ON';
  if (budget > 0 && (budget < 1024 || budget >= config.modelMaxTokens)) {
    reader.problems.push(
      `SKILLFLOW_THINKING_BUDGET_TOKENS=${budget} must be at least 1024 and below SKILLFLOW_MODEL_MAX_TOKENS (${config.modelMaxTokens}), or 0 to turn thinking off.`,
    );
  }
}

/** API keys and auth; auth off is refused on an address others can reach unless allowed on purpose. */
function settleAuth(reader: SettingsReader, config: Config): void {
  const { problems } = reader;
  const apiKeys = parseApiKeys(reader.optional('SKILLFLOW_API_KEYS'), problems);
  const auth = reader.text('SKILLFLOW_AUTH', 'on');
  if (auth !== 'on' && auth !== 'off') problems.push(`SKILLFLOW_AUTH=${JSON.stringify(auth)} must be "on" or "off".`);
  config.apiKeys = apiKeys;
  config.authEnabled = auth !== 'off';
  const network = reader.text('SKILLFLOW_UNAUTHENTICATED_NETWORK', 'refuse');
  if (network !== 'allow' && network !== 'refuse')
    problems.push(`SKILLFLOW_UNAUTHENTICATED_NETWORK=${JSON.stringify(network)} must be "allow" or "refuse".`);
  config.unauthenticatedNetwork = network === 'allow';
  if (config.authEnabled || config.unauthenticatedNetwork) return;
  if (!isLoopbackHost(config.codec.host)) {
    problems.push(
      `SKILLFLOW_AUTH=off with SKILLFLOW_CODEC_HOST=${config.codec.host} would let anyone who can reach the codec read every conversation. ` +
        'Listen on a loopback address, turn auth on, or set SKILLFLOW_UNAUTHENTICATED_NETWORK=allow if that is what you want.',
    );
  }
  if (!isLoopbackHost(config.host)) {
    problems.push(
      `SKILLFLOW_AUTH=off with HOST=${config.host} would let anyone who can reach this address act as an operator. ` +
        'Listen on a loopback address (HOST=127.0.0.1), turn auth on, or set SKILLFLOW_UNAUTHENTICATED_NETWORK=allow if that is what you want.',
    );
  }
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
function parseCorsOrigins(raw: string | undefined, problems: string[], name = 'SKILLFLOW_CORS_ORIGINS'): string[] {
  if (raw === undefined) return [];
  const origins = raw
    .split(',')
    .map((part) => part.trim().replace(/\/+$/, ''))
    .filter(Boolean);
  for (const origin of origins) {
    if (origin !== '*' && !/^https?:\/\/[^/\s]+$/.test(origin)) {
      problems.push(
        `${name} entry ${JSON.stringify(origin)} must be an origin like https://app.example.com (no path), or *.`,
      );
    }
  }
  return origins;
}

/** `10.0.0.0/8, 192.0.2.7, fd00::/8`: addresses and CIDR ranges, separated by commas or spaces. */
function addressRanges(raw: string | undefined, problems: string[]): string[] {
  const entries = (raw ?? '').split(/[\s,]+/).filter(Boolean);
  for (const entry of entries) {
    const [address, bits, ...rest] = entry.split('/');
    const family = net.isIP(address);
    const width = family === 4 ? 32 : 128;
    const validBits = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= width);
    if (family === 0 || !validBits || rest.length > 0) {
      problems.push(
        `SKILLFLOW_TRUSTED_PROXIES entry ${JSON.stringify(entry)} must be an IP address or a CIDR range (10.0.0.0/8, fd00::/8) of the proxies ` +
          'in front of the API; unset it when clients connect to the API directly.',
      );
    }
  }
  return [...new Set(entries)];
}

/** 127.0.0.0/8, ::1 and localhost: addresses only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127(?:\.\d{1,3}){3}$/.test(bare) || bare === '::ffff:127.0.0.1';
}

/** A secret for an HMAC key: at least `minSecretBytes` bytes (UTF-8), so tokens and cursors cannot be forged. */
function secret(name: string, raw: string | undefined, problems: string[]): string | undefined {
  if (raw === undefined) return undefined;
  if (Buffer.byteLength(raw) < minSecretBytes) {
    problems.push(
      `${name} is ${Buffer.byteLength(raw)} bytes; it must be at least ${minSecretBytes} (generate one with: openssl rand -base64 48), or unset it to generate one into the data dir.`,
    );
    return undefined;
  }
  return raw;
}

/** A secret that goes into a URL's path: letters, digits, - and _ only. */
function pathToken(name: string, value: string | undefined, problems: string[]): string | undefined {
  if (value === undefined || /^[A-Za-z0-9_-]+$/.test(value)) return value;
  problems.push(
    `${name} goes into a URL path: use letters, digits, - and _ only (generate one with: openssl rand -hex 32).`,
  );
  return undefined;
}

function redisPrefix(raw: string | undefined, namespace: string, problems: string[]): string {
  if (raw === undefined) return `skillflow:${namespace}:`;
  if (!/^[A-Za-z0-9:._-]{1,100}$/.test(raw)) {
    problems.push(
      `SKILLFLOW_REDIS_PREFIX=${JSON.stringify(raw)} must be 1-100 letters, digits and : . _ -, for example skillflow:prod:.`,
    );
    return `skillflow:${namespace}:`;
  }
  return raw;
}

function redisUrl(raw: string | undefined, problems: string[]): string | undefined {
  if (raw === undefined) return undefined;
  if (!/^rediss?:\/\/\S+$/.test(raw)) {
    problems.push(
      `SKILLFLOW_REDIS_URL=${JSON.stringify(raw)} must be a redis:// or rediss:// URL, for example redis://localhost:6379.`,
    );
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

function optionalPath(raw: string | undefined): string | undefined {
  return raw === undefined ? undefined : path.resolve(raw);
}

/** `calculator category:web mcp:github`: tool names, categories and MCP servers, separated by spaces or commas. */
function grantList(raw: string | undefined, problems: string[]): string[] {
  const words = (raw ?? '').split(/[\s,]+/).filter(Boolean);
  for (const word of words) {
    if (parseGrant(word) === null)
      problems.push(`SKILLFLOW_DEFAULT_TOOLS entry ${JSON.stringify(word)} must be ${grantSyntax}.`);
  }
  return [...new Set(words)];
}

/** `api.example.com, *.wikipedia.org, 10.0.0.5:8080`: host names (a leading `*.` for subdomains) or IP addresses, optional port. */
function hostList(raw: string | undefined, problems: string[]): string[] {
  const entries = (raw ?? '')
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((entry) => entry.toLowerCase());
  for (const entry of entries) {
    if (parseHostPattern(entry) === null) {
      problems.push(
        `SKILLFLOW_HTTP_FETCH_HOSTS entry ${JSON.stringify(entry)} must be a host name (api.example.com), *.example.com, or an IP address, with an optional :port; no scheme or path.`,
      );
    }
  }
  return [...new Set(entries)];
}

/** `key=user,key=user:operator` */
function parseApiKeys(raw: string | undefined, problems: string[]): ApiKey[] {
  if (raw === undefined) return [];
  const keys: ApiKey[] = [];
  for (const entry of raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
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
