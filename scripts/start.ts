import fs from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import type { ChildProcess } from 'node:child_process';
import { uiEndpointOf, uiTokenOf } from '../lib/codec/access';
import { ConfigError, loadConfig } from '../lib/config';
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

async function waitFor(
  ready: () => boolean | Promise<boolean>,
  child: ChildProcess,
  what: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${what} exited during start-up (see its output above).`);
    if (await ready()) return;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  throw new Error(`${what} was not ready within ${timeoutMs / 1000}s.`);
}

const waitForHealth = (url: string, child: ChildProcess, timeoutMs: number) =>
  waitFor(
    () =>
      fetch(url).then(
        (response) => response.ok,
        () => false,
      ),
    child,
    'The API',
    timeoutMs,
  );

async function main(): Promise<void> {
  const config = loadConfig();
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });

  const codecHost = config.codec.host === '0.0.0.0' || config.codec.host === '::' ? '127.0.0.1' : config.codec.host;
  const codecUrl = `http://${codecHost.includes(':') ? `[${codecHost}]` : codecHost}:${config.codec.port}`;
  const codecUiEndpoint = uiEndpointOf(codecUrl, uiTokenOf(config));
  let server: DevServer | undefined;
  let uiUrl: string | undefined;
  const plan = temporalStartPlan(config.temporal, await temporalAnswers(config.temporal.connection));
  if (plan.kind === 'unreachable') throw new TemporalUnreachableError(plan.reason);
  if (plan.kind === 'use-running') {
    say(`Using the Temporal server already answering at ${describeTemporalConnection(config.temporal)}.`);
  } else {
    const cli = await obtainTemporalCli(userCacheDir(), say);
    say(
      `Starting the Temporal dev server (${cli.source}: ${cli.path}); data in ${path.join(config.dataDir, 'temporal')}`,
    );
    server = await startDevServer({
      cli: cli.path,
      address: config.temporalAddress,
      namespace: config.temporalNamespace,
      dbFile: path.join(config.dataDir, 'temporal', 'temporal.sqlite'),
      uiPort: config.temporalUiPort,
      uiCodecEndpoint: codecUiEndpoint,
      logFile: path.join(config.dataDir, 'temporal', 'server.log'),
    });
    uiUrl = server.uiUrl;
  }
  const connection = await Connection.connect(config.temporal.connection);
  const setup = await ensureNamespaceSetup(
    connection,
    config.temporalNamespace,
    config.retentionDays,
    server ? 'apply' : 'keep',
  );
  await connection.close();
  if (!server)
    for (const line of foreignServerChanges(
      setup,
      config.temporalAddress,
      config.temporalNamespace,
      config.retentionDays,
    ))
      say(line);

  // Before the API starts, so it serves the current build at /app; a failed build leaves the rest working.
  await buildWebApp(say).then(
    (build) => say(describeWebBuild(build)),
    (err: Error) => say(`${err.message}\nThe API starts all the same; its /app answers 503 until the web app builds.`),
  );
  const env = { ...process.env, SKILLFLOW_DATA_DIR: config.dataDir };
  const node = (entry: string) => ['--import', 'tsx', entry];
  let workerReady = false;
  // The worker with its memory settings (scripts/worker.sh); it reads SKILLFLOW_WORKER_HEAP_MB from env, .env included.
  const worker = spawnLabelled(
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
  const api = spawnLabelled('api', process.execPath, node('api/server.ts'), apiEnv, root);
  const codec = spawnLabelled('codec', process.execPath, node('lib/codec/main.ts'), env, root);
  const children = [api, worker, codec];

  let stopping = false;
  const stopAll = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say('Stopping the API, the codec, the worker and the Temporal server...');
    await stopProcess(api);
    await stopProcess(codec);
    await stopProcess(worker);
    await server?.stop();
    say('Stopped.');
    process.exit(code);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stopAll(0));
  for (const child of children) {
    child.once('exit', (code, signal) => {
      if (stopping) return;
      console.error(`[start] A process exited unexpectedly (${signal ?? `code ${code}`}); stopping the rest.`);
      void stopAll(1);
    });
  }
  server?.process.once('exit', () => {
    if (!stopping) {
      console.error('[start] The Temporal dev server exited unexpectedly; stopping the rest.');
      void stopAll(1);
    }
  });

  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const apiUrl = `http://${host}:${config.port}`;
  try {
    await waitForHealth(`${apiUrl}/healthz`, api, 60_000);
    await waitFor(
      () =>
        fetch(`${codecUrl}/healthz`).then(
          (response) => response.ok,
          () => false,
        ),
      codec,
      'The codec',
      60_000,
    );
    await waitFor(() => workerReady, worker, 'the worker', 120_000);
  } catch (err) {
    console.error(`[start] ${err instanceof Error ? err.message : String(err)}`);
    await stopAll(1);
  }
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
  buildClientPackage().then(
    (line) => say(line),
    (err: Error) => say(`The client package (packages/client) did not build: ${err.message}`),
  );
}

main().catch((err) => {
  const known =
    err instanceof ConfigError || err instanceof TemporalCliError || err instanceof TemporalUnreachableError;
  console.error(`[start] ${known ? err.message : err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
