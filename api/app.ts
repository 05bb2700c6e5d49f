import { randomBytes } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import websocket from '@fastify/websocket';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Tracer } from '@opentelemetry/api';
import type { Client } from '@temporalio/client';
import type Redis from 'ioredis';
import type { ApiKey, Config } from '../lib/config';
import type { OpsLog } from '../lib/logging';
import { InProcessChannel, type LiveChannel } from '../lib/live';
import { installAuth } from './auth';
import type { ApiContext, SkillCatalogSource } from './context';
import { PageCursors } from './cursors';
import { installErrorHandling } from './errors';
import { createRateLimits, failedAuthLimit, installAddressLimits, installCors, installUserLimit } from './limits';
import { installLocalOnly } from './local-only';
import { requestForLog } from './log-redaction';
import { MemoryQuotaStore, RedisQuotaStore } from './quota-store';
import { Quotas } from './quotas';
import type { ApiMetrics } from './metrics';
import { closeRedis, connectApiRedis, guardApiRedis } from './redis';
import { SessionSweeper } from './session-sweeper';
import { installRequestIds, requestIdHeader, requestIdOf } from './request-ids';
import { checkpointRoutes } from './routes/checkpoints';
import { healthRoutes } from './routes/health';
import { linkRoutes } from './routes/links';
import { LinkAccessTokens } from './links/access-tokens';
import { AnswerLinks } from './links/answer-links';
import { installLinkScope } from './links/scope';
import { LinkStreams } from './links/link-streams';
import { LocalLinkRevocations, RedisLinkRevocations } from './links/revocations';
import { MemoryLinkStore, RedisLinkStore, type LinkStore } from './links/store';
import { sessionRoutes } from './routes/sessions';
import { skillRoutes } from './routes/skills';
import { streamRoutes } from './routes/streams';
import { turnRoutes } from './routes/turns';
import { sharedSchemas } from '../core/protocol';
import { StreamTokens } from './stream-tokens';
import { OpenStreams } from './streams/open-streams';
import { SharedStreamCounts } from './streams/shared-stream-counts';
import type { TurnFeedSettings } from './streams/feed-settings';
import { TurnFeeds } from './streams/turn-feeds';
import { installHttpTracing } from './tracing';
import { webAppRoutes } from './web-app';

export interface AppOptions {
  client: Client;
  config: Config;
  apiKeys: ApiKey[];
  /** Where live deltas arrive; the caller owns and closes it. Default: an in-process channel the app closes. */
  live?: LiveChannel;
  /** Default: no skill routes data (503), and no check of `skill` when a turn starts. */
  skills?: SkillCatalogSource;
  /** Signs stream tokens and page cursors (at least 32 bytes). Default: a secret of this process only (neither survives a restart). */
  streamTokenSecret?: Buffer;
  /** Structured logs (lib/logging.ts); every 5xx is logged with its cause, requests too with SKILLFLOW_LOG_REQUESTS=1. Default: none. Stream tokens in URLs are redacted. */
  logger?: FastifyBaseLogger;
  /** Request metrics (SKILLFLOW_API_METRICS_PORT); default none. */
  metrics?: ApiMetrics;
  /** A span per request (lib/tracing.ts); default none. */
  tracer?: Tracer;
  /**
   * Where rate-limit windows and quota records are shared between API processes; the caller owns and closes it.
   * Default: a connection to SKILLFLOW_REDIS_URL when it is set (the app closes it), else this process's memory.
   */
  redis?: Redis;
  /** Operational messages (Redis coming and going, hanging and answering again). Default: the log, at each line's level. */
  log?: OpsLog;
  /** Where answer links are kept. Default: Redis when the app has one (see `redis`), else this process's memory. */
  links?: LinkStore;
  /** The folder of the built web app served at /app. Default: web/dist (api/web-app.ts). */
  appDir?: string;
  /** The clock of answer links and their access tokens (tests move it). Default: Date.now. */
  now?: () => number;
  /** How streams follow turns (api/streams/turn-feed.ts). Default: `defaultFeedSettings` (api/streams/feed-settings.ts). */
  feedSettings?: Partial<TurnFeedSettings>;
  /** How often the links of streams open through answer links are read again (api/links/link-streams.ts). */
  linkRecheckMs?: number;
}

/** Wires the API; `server.ts` only listens, tests use `app.inject`. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { client, config } = options;
  const app = Fastify({
    // Stream tokens (`?token=`) are credentials: the request line is logged with them redacted.
    ...(options.logger
      ? { loggerInstance: options.logger.child({}, { serializers: { req: requestForLog } }) }
      : { logger: false }),
    logController: new LogController({ disableRequestLogging: !config.logRequests, requestIdLogLabel: 'requestId' }),
    // The client's address (per-address limits, logs) comes from X-Forwarded-For only when the peer is a listed proxy.
    trustProxy: config.trustedProxies.length > 0 ? config.trustedProxies : false,
    genReqId: (request) => requestIdOf(request.headers[requestIdHeader]),
    bodyLimit: config.bodyLimitBytes,
    requestTimeout: config.requestTimeoutMs,
    handlerTimeout: config.requestTimeoutMs,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', allErrors: false } },
  });
  for (const schema of sharedSchemas) app.addSchema(schema);
  installRequestIds(app);
  if (options.tracer) installHttpTracing(app, options.tracer);
  installErrorHandling(app);

  const log: OpsLog = options.log ?? ((line, level = 'warn') => app.log[level](line));
  const secret = options.streamTokenSecret ?? randomBytes(32);
  const live = options.live ?? new InProcessChannel();
  const closing = new AbortController();
  if (!options.live) app.addHook('onClose', async () => live.close());
  const redisClient = options.redis ?? (config.redisUrl ? await connectApiRedis(config.redisUrl, log) : undefined);
  if (redisClient && !options.redis) app.addHook('onClose', async () => closeRedis(redisClient));
  const redis = redisClient && guardApiRedis(redisClient, log);
  if (redis) app.addHook('onClose', async () => redis.guard.close());
  const limits = createRateLimits(config, redis, () => undefined);
  const sharedStreams = redis ? new SharedStreamCounts(redis, config.redisPrefix, () => undefined) : undefined;
  if (sharedStreams) app.addHook('onClose', async () => sharedStreams.close());
  const quotaStore = redis ? new RedisQuotaStore(redis, config.redisPrefix) : new MemoryQuotaStore();
  const quotas = new Quotas(client, config, quotaStore, live);
  const now = options.now ?? Date.now;
  const linkStore =
    options.links ?? (redis ? new RedisLinkStore(redis, config.redisPrefix, now) : new MemoryLinkStore(now));
  const revocations = redis
    ? new RedisLinkRevocations(
        redis,
        redisClient!.duplicate({ connectionName: 'skillflow-api-links' }),
        config.redisPrefix,
        log,
      )
    : new LocalLinkRevocations();
  app.addHook('onClose', async () => revocations.close());
  const links = new AnswerLinks(linkStore, new LinkAccessTokens(secret, config.linkAccessTtlMs, now), now, revocations);
  const sweeper = new SessionSweeper(client, config, quotaStore, quotas, log);
  sweeper.start();
  app.addHook('onClose', async () => sweeper.stop());
  const context: ApiContext = {
    client,
    config,
    live,
    feeds: new TurnFeeds(client, live, options.feedSettings, log),
    tokens: new StreamTokens(secret, config.streamTokenTtlMs),
    links,
    linkStreams: new LinkStreams((linkId) => links.callerOfLink(linkId), revocations, options.linkRecheckMs),
    cursors: new PageCursors(secret),
    streams: new OpenStreams({ perUser: config.maxStreamsPerKey, total: config.maxStreams }, sharedStreams),
    limits,
    quotas,
    skills: options.skills,
    closing: closing.signal,
  };

  app.addHook('onClose', async () => context.feeds.close());
  app.addHook('onClose', async () => context.linkStreams.close());
  options.metrics?.install(app, () => context.streams.size);

  // Closing stops new connections; what is still open must not hold it: `?wait=true` requests answer 202 at once, and
  // streams end (clients resume on another process with Last-Event-ID). Before @fastify/websocket's own preClose, so
  // sockets get a proper close code and SSE streams end cleanly.
  app.addHook('preClose', async () => {
    closing.abort();
    context.streams.closeAll();
  });
  // A response sent once the close began ends its connection: Node closes only the connections idle when the close
  // starts, and one kept alive after it would hold the close for Fastify's keepAliveTimeout (72 s).
  app.addHook('onSend', async (_request, reply) => {
    if (closing.signal.aborted) void reply.header('connection', 'close');
  });
  // Before auth, so an upgrade refused with 401 or 404 still has its socket closed by the plugin.
  await app.register(websocket, { options: { maxPayload: config.bodyLimitBytes } });
  await installCors(app, config);
  installLocalOnly(app, config);
  installAddressLimits(app, limits);
  const failedAuth = failedAuthLimit(limits);
  installAuth(
    app,
    { keys: options.apiKeys, tokens: context.tokens, links: context.links },
    config.authEnabled,
    failedAuth,
  );
  installUserLimit(app, limits);
  installLinkScope(app);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'skillflow API',
        version: '0.1.0',
        description:
          'Start chat turns, follow their events, answer checkpoints. Errors are always {"error": {"code", "message"}}; see docs/api.md.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());

  await healthRoutes(app, context);
  await sessionRoutes(app, context);
  await turnRoutes(app, context);
  await checkpointRoutes(app, context);
  await streamRoutes(app, context);
  await skillRoutes(app, context);
  await linkRoutes(app, context, failedAuth);
  await webAppRoutes(app, config, options.appDir);
  return app;
}
