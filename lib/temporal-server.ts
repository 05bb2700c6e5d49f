import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { temporalAnswers, splitAddress } from './dev-server';
import type { TemporalConnectionOptions } from './temporal-connection';

/**
 * The production Temporal server (not the CLI's dev server), built from its Go module into a cache the way
 * lib/temporal-cli.ts builds the CLI: the same release the CLI v1.5.1 embeds and docker-compose.yml runs. The build
 * holds the server, the SQL schema tool, and the module's PostgreSQL schema files.
 */
export const pinnedServerVersion = 'v1.29.1';
const serverModule = 'go.temporal.io/server';

export class TemporalServerError extends Error {
  override name = 'TemporalServerError';
}

export interface ServerBuild {
  dir: string;
  /** The `temporal-server` binary (go.temporal.io/server/cmd/server). */
  server: string;
  /** `temporal-sql-tool` (go.temporal.io/server/cmd/tools/sql), under the name the compose job's script calls it. */
  sqlTool: string;
  /** The module's `schema` folder: `postgresql/v12/temporal/versioned` and `postgresql/v12/visibility/versioned`. */
  schemaDir: string;
}

/** Where a build lives under a cache root (the root is the caller's: the project's `.cache`, or a per-user cache). */
export function serverBuildOf(cacheDir: string): ServerBuild {
  const dir = path.join(cacheDir, 'temporal-server', pinnedServerVersion);
  return {
    dir,
    server: path.join(dir, 'temporal-server'),
    sqlTool: path.join(dir, 'temporal-sql-tool'),
    schemaDir: path.join(dir, 'schema'),
  };
}

/** The cached build, or one built now (minutes on 2 cores the first time; Go's caches make a rebuild quick). */
export async function obtainTemporalServer(
  cacheDir: string,
  progress: (line: string) => void,
): Promise<ServerBuild & { built: boolean }> {
  const build = serverBuildOf(cacheDir);
  if (fs.existsSync(path.join(build.dir, 'complete'))) return { ...build, built: false };
  const go = findGo();
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-temporal-server-'));
  const started = Date.now();
  try {
    progress(`Building Temporal server ${pinnedServerVersion} and its SQL tool from the Go module (first run only)...`);
    await runGo(
      go,
      [
        'install',
        `${serverModule}/cmd/server@${pinnedServerVersion}`,
        `${serverModule}/cmd/tools/sql@${pinnedServerVersion}`,
      ],
      staging,
      progress,
    );
    const downloaded = await runGo(
      go,
      ['mod', 'download', '-json', `${serverModule}@${pinnedServerVersion}`],
      staging,
      progress,
    );
    const moduleDir = (JSON.parse(downloaded) as { Dir?: string }).Dir;
    if (!moduleDir || !fs.existsSync(path.join(moduleDir, 'schema', 'postgresql', 'v12'))) {
      throw new TemporalServerError(
        `The Go module cache has no schema/postgresql/v12 for ${serverModule}@${pinnedServerVersion}.`,
      );
    }
    fs.rmSync(build.dir, { recursive: true, force: true });
    fs.mkdirSync(build.dir, { recursive: true });
    fs.copyFileSync(path.join(staging, 'server'), build.server);
    fs.copyFileSync(path.join(staging, 'sql'), build.sqlTool);
    fs.chmodSync(build.server, 0o755);
    fs.chmodSync(build.sqlTool, 0o755);
    fs.cpSync(path.join(moduleDir, 'schema', 'postgresql'), path.join(build.schemaDir, 'postgresql'), {
      recursive: true,
    });
    fs.chmodSync(build.schemaDir, 0o755);
    fs.writeFileSync(path.join(build.dir, 'complete'), `${serverModule}@${pinnedServerVersion}\n`);
    progress(
      `Built Temporal server ${pinnedServerVersion} in ${Math.round((Date.now() - started) / 1000)} s; cached in ${build.dir}`,
    );
    return { ...build, built: true };
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

function findGo(): string {
  for (const dir of [...(process.env.PATH ?? '').split(path.delimiter), '/usr/local/go/bin']) {
    const candidate = path.join(dir, 'go');
    if (dir && fs.existsSync(candidate)) return candidate;
  }
  throw new TemporalServerError(
    'Building the Temporal server needs Go 1.23+ (https://go.dev/dl) on PATH or in /usr/local/go/bin.',
  );
}

function runGo(go: string, args: string[], gobin: string, progress: (line: string) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(go, args, {
      cwd: gobin,
      env: { ...process.env, GOBIN: gobin, GOFLAGS: '-modcacherw' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    const tail: string[] = [];
    const ticker = setInterval(() => progress(`  go ${args[0]} still running...`), 30_000);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => {
      tail.push(...chunk.toString().split('\n').filter(Boolean));
      tail.splice(0, Math.max(0, tail.length - 30));
    });
    child.on('error', (err) => {
      clearInterval(ticker);
      reject(err);
    });
    child.on('close', (code) => {
      clearInterval(ticker);
      if (code === 0) resolve(stdout);
      else
        reject(
          new TemporalServerError(
            `go ${args.join(' ')} failed (exit ${code}):\n${tail.join('\n')}\nIs the Go module proxy reachable?`,
          ),
        );
    });
  });
}

export interface PostgresTarget {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  visibilityDatabase: string;
}

export interface ServerConfigOptions {
  /** Folder for the config (`<dir>/config/skillflow.yaml`). */
  dir: string;
  /** host:port of the frontend; the other services listen on free ports the caller picked. */
  frontendAddress: string;
  ports: {
    frontendHttp: number;
    frontendMembership: number;
    history: number;
    historyMembership: number;
    matching: number;
    matchingMembership: number;
    worker: number;
    workerMembership: number;
  };
  postgres: PostgresTarget;
  /** Dynamic config file (docker-compose.yml's is deploy/temporal/dynamicconfig/skillflow.yaml). */
  dynamicConfigFile: string;
  /** Mutual TLS on the frontend; absent: plain TCP. */
  tls?: ServerTls;
}

/**
 * PEM files for a frontend that requires client certificates. The server's certificate must also allow client
 * authentication: the server's own services present it when they call the frontend.
 */
export interface ServerTls {
  certFile: string;
  keyFile: string;
  /** The CA that signed the server's certificate and every client's. */
  caFile: string;
  /** The name the server's certificate is for, as its own services check it. */
  serverName: string;
}

/** `global.tls` of the server config: mTLS on the frontend, and the same identity for the server's internal callers. */
function tlsSection(tls: ServerTls): string {
  const [cert, key, ca, name] = [tls.certFile, tls.keyFile, tls.caFile, tls.serverName].map((value) =>
    JSON.stringify(value),
  );
  return [
    '',
    '  tls:',
    '    frontend:',
    '      server:',
    `        certFile: ${cert}`,
    `        keyFile: ${key}`,
    '        requireClientAuth: true',
    `        clientCaFiles: [${ca}]`,
    '      client:',
    `        serverName: ${name}`,
    `        rootCaFiles: [${ca}]`,
    '    systemWorker:',
    `      certFile: ${cert}`,
    `      keyFile: ${key}`,
    '      client:',
    `        serverName: ${name}`,
    `        rootCaFiles: [${ca}]`,
  ].join('\n');
}

/** Writes a single-process server config on PostgreSQL (what compose's `temporal` container runs), all on loopback. */
export function writeServerConfig(options: ServerConfigOptions): { root: string; env: string } {
  const { host, port: frontend } = splitAddress(options.frontendAddress);
  const pg = options.postgres;
  const store = (database: string, conns: number) => `
      sql:
        pluginName: postgres12
        databaseName: ${JSON.stringify(database)}
        connectAddr: ${JSON.stringify(`${pg.host}:${pg.port}`)}
        connectProtocol: tcp
        user: ${JSON.stringify(pg.user)}
        password: ${JSON.stringify(pg.password)}
        maxConns: ${conns}
        maxIdleConns: ${conns}
        maxConnLifetime: 1h`;
  const service = (grpc: number, membership: number, http?: number) => `
    rpc:
      grpcPort: ${grpc}
      membershipPort: ${membership}
      bindOnIP: ${JSON.stringify(host)}${http ? `\n      httpPort: ${http}` : ''}`;
  const p = options.ports;
  const yaml = `# Written by lib/temporal-server.ts: Temporal on PostgreSQL, every service in one process, on ${host}.
log:
  stdout: true
  level: warn
persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: 4
  datastores:
    postgres-default:${store(pg.database, 20)}
    postgres-visibility:${store(pg.visibilityDatabase, 4)}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: ${JSON.stringify(host)}${options.tls ? tlsSection(options.tls) : ''}
services:
  frontend:${service(frontend, p.frontendMembership, p.frontendHttp)}
  history:${service(p.history, p.historyMembership)}
  matching:${service(p.matching, p.matchingMembership)}
  worker:${service(p.worker, p.workerMembership)}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: ${JSON.stringify(options.frontendAddress)}
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: ${JSON.stringify(options.dynamicConfigFile)}
  pollInterval: 10s
`;
  fs.mkdirSync(path.join(options.dir, 'config'), { recursive: true });
  fs.writeFileSync(path.join(options.dir, 'config', 'skillflow.yaml'), yaml);
  return { root: options.dir, env: 'skillflow' };
}

export interface RunningServer {
  process: ChildProcess;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
}

/**
 * Starts the server on a config from `writeServerConfig` and waits until its frontend answers, reached with
 * `connection` (a plain address, or the TLS options a client of an mTLS frontend needs).
 */
export async function startTemporalServer(
  build: ServerBuild,
  config: { root: string; env: string },
  connection: string | TemporalConnectionOptions,
  logFile: string,
  timeoutMs = 120_000,
): Promise<RunningServer> {
  const log = fs.openSync(logFile, 'a');
  const child = spawn(
    build.server,
    ['--root', config.root, '--config', 'config', '--env', config.env, '--allow-no-auth', 'start'],
    { stdio: ['ignore', log, log] },
  );
  fs.closeSync(log);
  let exitedWith: string | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exitedWith = signal ?? `code ${code}`;
      resolve();
    });
  });
  const deadline = Date.now() + timeoutMs;
  while (!(await temporalAnswers(connection))) {
    if (exitedWith || Date.now() > deadline) {
      child.kill('SIGKILL');
      const tail = fs
        .readFileSync(logFile, 'utf8')
        .split('\n')
        .slice(-10)
        .map((line) => line.slice(0, 400))
        .join('\n');
      throw new TemporalServerError(
        `Temporal server ${exitedWith ? `exited (${exitedWith})` : `did not answer within ${timeoutMs / 1000} s`}. Log ${logFile}:\n${tail}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  return { process: child, exited };
}
