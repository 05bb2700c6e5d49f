import fs from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import type { ChildProcess } from 'node:child_process';
import { uiEndpointOf, uiTokenOf } from '../lib/codec/access';
import { ConfigError, loadConfig, type Config } from '../lib/config';
import {
  ensureNamespaceSetup,
  foreignServerChanges,
  startDevServer,
  temporalAnswers,
  type DevServer,
} from '../lib/dev-server';
import { spawnLabelled, stopProcess } from '../lib/processes';
import { describeTemporalConnection, temporalStartPlan, TemporalUnreachableError } from '../lib/temporal-connection';
import { obtainTemporalCli, userCacheDir, TemporalCliError } from '../lib/temporal-cli';
import { buildClientPackage } from './client-package';
import { buildWebApp, describeWebBuild } from './web-build';
import { workerReadyMarker } from '../worker/ready';

const root = path.resolve(__dirname, '..');
const say = (line: string) => console.log(`[start] ${line}`);

class StartUpError extends Error {
  override name = 'StartUpError';
}

async function waitFor(
  ready: () => boolean | Promise<boolean>,
  child: ChildProcess,
  what: string,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    signal.throwIfAborted();
    if (child.exitCode !== null) throw new StartUpError(`${what} exited during start-up (see its output above).`);
    if (await ready()) return;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  throw new StartUpError(`${what} was not ready within ${timeoutMs / 1000}s.`);
}

const answersOk = (url: string) => () =>
  fetch(url).then(
    (response) => response.ok,
    () => false,
  );

/** What this run started, stopped in this order: the API, the codec, the worker, then the Temporal dev server. */
interface Started {
  api?: ChildProcess;
  codec?: ChildProcess;
  worker?: ChildProcess;
  server?: DevServer;
  /** The client package's build, which runs once the rest is up. */
  clientBuild?: Promise<unknown>;
}

/**
 * Starts everything, registering each process in `started` (and handing it to `watch`) as soon as it exists. Each step
 * gives up when `signal` aborts, after stopping what that step itself was running (a build, a dev server not yet
 * answering).
 */
async function startAll(
  config: Config,
  started: Started,
  watch: (child: ChildProcess, what: string) => void,
  signal: AbortSignal,
): Promise<void> {
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });

  const codecHost = config.codec.host === '0.0.0.0' || config.codec.host === '::' ? '127.0.0.1' : config.codec.host;
  const codecUrl = `http://${codecHost.includes(':') ? `[${codecHost}]` : codecHost}:${config.codec.port}`;
  const codecUiEndpoint = uiEndpointOf(codecUrl, uiTokenOf(config));
  let uiUrl: string | undefined;
  const plan = temporalStartPlan(config.temporal, await temporalAnswers(config.temporal.connection));
  signal.throwIfAborted();
  if (plan.kind === 'unreachable') throw new TemporalUnreachableError(plan.reason);
  if (plan.kind === 'use-running') {
    say(`Using the Temporal server already answering at ${describeTemporalConnection(config.temporal)}.`);
  } else {
    const cli = await obtainTemporalCli(userCacheDir(), say, signal);
    signal.throwIfAborted();
    say(
      `Starting the Temporal dev server (${cli.source}: ${cli.path}); data in ${path.join(config.dataDir, 'temporal')}`,
    );
    started.server = await startDevServer({
      cli: cli.path,
      address: config.temporalAddress,
      namespace: config.temporalNamespace,
      dbFile: path.join(config.dataDir, 'temporal', 'temporal.sqlite'),
      uiPort: config.temporalUiPort,
      uiCodecEndpoint: codecUiEndpoint,
      logFile: path.join(config.dataDir, 'temporal', 'server.log'),
      signal,
    });
    uiUrl = started.server.uiUrl;
    watch(started.server.process, 'The Temporal dev server');
  }
  const connection = await Connection.connect(config.temporal.connection);
  const setup = await ensureNamespaceSetup(
    connection,
    config.temporalNamespace,
    config.retentionDays,
    started.server ? 'apply' : 'keep',
  ).finally(() => connection.close());
  signal.throwIfAborted();
  if (!started.server)
    for (const line of foreignServerChanges(
      setup,
      config.temporalAddress,
      config.temporalNamespace,
      config.retentionDays,
    ))
      say(line);

  // Before the API starts, so it serves the current build at /app; a failed build leaves the rest working.
  if (config.appEnabled)
    await buildWebApp(say, signal).then(
      (build) => say(describeWebBuild(build)),
      (err: Error) => {
        signal.throwIfAborted();
        say(`${err.message}\nThe API starts all the same; its /app answers 503 until the web app builds.`);
      },
    );
  const env = { ...process.env, SKILLFLOW_DATA_DIR: config.dataDir };
  const node = (entry: string) => ['--import', 'tsx', entry];
  let workerReady = false;
  // The worker with its memory settings (scripts/worker.sh); it reads SKILLFLOW_WORKER_HEAP_MB from env, .env included.
  started.worker = spawnLabelled(
    'worker',
    'sh',
    [path.join(root, 'scripts', 'worker.sh')],
    { ...env, NODE: process.execPath },
    root,
    (line) => {
      if (line.includes(workerReadyMarker)) workerReady = true;
    },
  );
  // The web app's links to a run point at the UI of the dev server started here, unless one is set.
  const apiEnv = uiUrl && !config.temporalUiUrl ? { ...env, SKILLFLOW_TEMPORAL_UI_URL: uiUrl } : env;
  started.api = spawnLabelled('api', process.execPath, node('api/server.ts'), apiEnv, root);
  started.codec = spawnLabelled('codec', process.execPath, node('lib/codec/main.ts'), env, root);
  for (const [child, what] of [
    [started.worker, 'The worker'],
    [started.api, 'The API'],
    [started.codec, 'The codec'],
  ] as const)
    watch(child, what);

  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const apiUrl = `http://${host}:${config.port}`;
  await waitFor(answersOk(`${apiUrl}/healthz`), started.api, 'The API', 60_000, signal);
  await waitFor(answersOk(`${codecUrl}/healthz`), started.codec, 'The codec', 60_000, signal);
  await waitFor(() => workerReady, started.worker, 'the worker', 120_000, signal);
  const lines = [
    '',
    'skillflow is running. Press Ctrl-C to stop everything.',
    `  API          ${apiUrl}`,
    `  API docs     ${apiUrl}/docs`,
    `  Web app      ${config.appEnabled ? `${apiUrl}/app/` : 'off (SKILLFLOW_APP=off)'}`,
    `  Temporal UI  ${uiUrl ?? '(the Temporal server you run yourself)'}`,
    `  Codec        ${codecUrl} (${uiUrl ? 'the UI shows what history holds by reference through it' : `set the UI's codec endpoint to ${codecUrl}/ui/<the token in ${config.codec.uiToken ? 'SKILLFLOW_CODEC_UI_TOKEN' : path.join(config.secretsDir, 'codec-ui-token')}>`})`,
    `  Temporal     ${describeTemporalConnection(config.temporal)}`,
    config.authEnabled
      ? `  API key      ${config.apiKeys.length > 0 ? 'one of SKILLFLOW_API_KEYS' : `in ${path.join(config.dataDir, 'api-key')}`}`
      : '  API key      none: SKILLFLOW_AUTH=off',
  ];
  if (!config.anthropicApiKey && !config.anthropicBaseUrl) {
    lines.push('', '  ANTHROPIC_API_KEY is not set: the API works, but every model call will fail until you set it.');
  }
  console.log(lines.join('\n') + '\n');
  // After start-up, so it does not slow it: the client package for apps that install it (README, "The client package").
  started.clientBuild = buildClientPackage(signal).then(
    (line) => say(line),
    (err: Error) => signal.aborted || say(`The client package (packages/client) did not build: ${err.message}`),
  );
}

/** Errors whose message says all: the reason and the fix, no stack needed. */
const explained = (err: unknown): err is Error =>
  err instanceof ConfigError ||
  err instanceof TemporalCliError ||
  err instanceof TemporalUnreachableError ||
  err instanceof StartUpError;

/**
 * Runs everything until a signal (SIGINT, SIGTERM, SIGHUP: at any time, start-up included) or one process's exit,
 * then stops what was started, in order, and exits.
 */
function main(): void {
  const config = loadConfig();
  const started: Started = {};
  const startUp = new AbortController();
  let stopping = false;
  let startingUp: Promise<void> = Promise.resolve();
  const stopAll = async (code: number) => {
    if (stopping) return;
    stopping = true;
    startUp.abort(new Error('skillflow is stopping'));
    await startingUp.catch(() => undefined);
    say('Stopping the API, the codec, the worker and the Temporal server...');
    for (const child of [started.api, started.codec, started.worker]) if (child) await stopProcess(child);
    await started.server?.stop();
    await started.clientBuild;
    say('Stopped.');
    process.exit(code);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stopAll(0));
  const watch = (child: ChildProcess, what: string) =>
    child.once('exit', (code, signal) => {
      if (stopping) return;
      console.error(`[start] ${what} exited unexpectedly (${signal ?? `code ${code}`}); stopping the rest.`);
      void stopAll(1);
    });
  startingUp = startAll(config, started, watch, startUp.signal);
  startingUp.catch((err: unknown) => {
    if (stopping) return;
    console.error(`[start] ${explained(err) ? err.message : err instanceof Error ? err.stack : String(err)}`);
    void stopAll(1);
  });
}

try {
  main();
} catch (err) {
  console.error(`[start] ${err instanceof ConfigError ? err.message : err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
}
