import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/** The Temporal CLI built from source when none is available (REFERENCE.md section 4: the last `go install`-able release). */
export const pinnedCliVersion = 'v1.5.1';
const cliModule = 'github.com/temporalio/cli';

export class TemporalCliError extends Error {
  override name = 'TemporalCliError';
}

export interface CliLocation {
  path: string;
  source: 'TEMPORAL_CLI' | 'PATH' | 'cache' | 'built';
}

/**
 * Where built binaries are kept, per user rather than per clone, so a second clone (or a CI run on the same machine)
 * finds them: SKILLFLOW_CACHE_DIR, else $XDG_CACHE_HOME/skillflow, else the platform's cache folder.
 */
export function userCacheDir(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
  home = os.homedir(),
): string {
  const configured = env.SKILLFLOW_CACHE_DIR?.trim();
  if (configured) return path.resolve(configured);
  const xdg = env.XDG_CACHE_HOME?.trim();
  if (xdg && path.isAbsolute(xdg)) return path.join(xdg, 'skillflow');
  if (platform === 'darwin') return path.join(home, 'Library', 'Caches', 'skillflow');
  if (platform === 'win32')
    return path.join(env.LOCALAPPDATA?.trim() || path.join(home, 'AppData', 'Local'), 'skillflow', 'Cache');
  return path.join(home, '.cache', 'skillflow');
}

export function cachedCliPath(cacheDir: string): string {
  return path.join(cacheDir, 'temporal', pinnedCliVersion, 'temporal');
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function onPath(command: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, command);
    if (dir && isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** TEMPORAL_CLI, then `temporal` on PATH, then the user's cached build; undefined when a build is needed. */
export function findTemporalCli(cacheDir: string, env = process.env): CliLocation | undefined {
  const configured = env.TEMPORAL_CLI?.trim();
  if (configured) {
    if (!isExecutable(configured)) {
      throw new TemporalCliError(
        `TEMPORAL_CLI=${configured} is not an executable file. Point it at a temporal binary or unset it.`,
      );
    }
    return { path: configured, source: 'TEMPORAL_CLI' };
  }
  const fromPath = onPath('temporal', env);
  if (fromPath) return { path: fromPath, source: 'PATH' };
  const cached = cachedCliPath(cacheDir);
  if (isExecutable(cached)) return { path: cached, source: 'cache' };
  return undefined;
}

export type Progress = (line: string) => void;

/**
 * How many packages the build compiles at most (the CLI's dependency graph, standard library included), or undefined
 * when Go cannot say; downloads the modules on the way, which the build needs anyway.
 */
async function countPackages(go: string, env: NodeJS.ProcessEnv): Promise<number | undefined> {
  const run = promisify(execFile);
  try {
    const downloaded = await run(go, ['mod', 'download', '-json', `${cliModule}@${pinnedCliVersion}`], {
      env,
      maxBuffer: 1 << 20,
    });
    const dir = (JSON.parse(downloaded.stdout) as { Dir?: string }).Dir;
    if (!dir) return undefined;
    const listed = await run(go, ['list', '-deps', './cmd/temporal'], { cwd: dir, env, maxBuffer: 16 << 20 });
    return listed.stdout.split('\n').filter((line) => line.trim() !== '').length;
  } catch {
    return undefined;
  }
}

export interface BuildOptions {
  /** How often progress is reported; default every 10 s. */
  tickMs?: number;
  env?: NodeJS.ProcessEnv;
  /** Aborted during the build: Go is stopped, and the build rejects with the signal's reason once it has exited. */
  signal?: AbortSignal;
}

/** Builds the pinned CLI from its Go module into the cache, reporting progress; minutes on a first run. */
export async function buildTemporalCli(
  cacheDir: string,
  progress: Progress,
  options: BuildOptions = {},
): Promise<CliLocation> {
  const env = options.env ?? process.env;
  const go = onPath('go', env) ?? (isExecutable('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : undefined);
  if (!go) {
    throw new TemporalCliError(
      'No Temporal CLI found and no Go toolchain to build one. Install one of: the Temporal CLI ' +
        '(https://docs.temporal.io/cli, then put `temporal` on PATH or set TEMPORAL_CLI=/path/to/temporal), ' +
        'or Go 1.23+ (https://go.dev/dl) so skillflow can build the CLI itself.',
    );
  }
  const target = cachedCliPath(cacheDir);
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-temporal-'));
  progress(
    `Building the Temporal CLI ${pinnedCliVersion} from its Go module into ${cacheDir} (once per user; a few minutes on 2 cores)...`,
  );
  const started = Date.now();
  const goEnv = { ...env, GOFLAGS: '-modcacherw' };
  progress('  downloading its Go modules and listing its packages...');
  const total = await countPackages(go, goEnv);
  let downloaded = 0;
  let compiled = 0;
  const output: string[] = [];
  const ticker = setInterval(() => {
    const seconds = Math.round((Date.now() - started) / 1000);
    const packages = total
      ? `${Math.min(compiled, total)} of ${total} packages compiled (${Math.floor((Math.min(compiled, total) / total) * 100)}%)`
      : `${compiled} packages compiled`;
    progress(
      `  building Temporal CLI: ${packages}${downloaded > 0 ? `, ${downloaded} modules downloaded` : ''}, ${seconds}s`,
    );
  }, options.tickMs ?? 10_000);
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(
        go,
        [
          'install',
          '-v',
          '-ldflags',
          `-X ${cliModule}/temporalcli.Version=${pinnedCliVersion.slice(1)}`,
          `${cliModule}/cmd/temporal@${pinnedCliVersion}`,
        ],
        { env: { ...goEnv, GOBIN: staging }, stdio: ['ignore', 'pipe', 'pipe'], signal: options.signal },
      );
      const onLine = (chunk: Buffer) => {
        for (const line of chunk.toString().split('\n')) {
          if (!line.trim()) continue;
          if (line.startsWith('go: downloading')) downloaded++;
          else compiled++;
          output.push(line);
          if (output.length > 40) output.shift();
        }
      };
      child.stdout.on('data', onLine);
      child.stderr.on('data', onLine);
      child.on('error', (err) => options.signal?.aborted || reject(err));
      child.on('close', (exitCode) => (options.signal?.aborted ? reject(options.signal.reason) : resolve(exitCode)));
    });
    if (code !== 0) {
      throw new TemporalCliError(
        `Building the Temporal CLI failed (go exit ${code}). Last output:\n${output.join('\n')}\n` +
          'Check that the Go module proxy is reachable, or install the Temporal CLI yourself and set TEMPORAL_CLI.',
      );
    }
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.copyFileSync(path.join(staging, 'temporal'), `${target}.partial`);
    fs.chmodSync(`${target}.partial`, 0o755);
    fs.renameSync(`${target}.partial`, target);
    progress(`Built the Temporal CLI in ${Math.round((Date.now() - started) / 1000)}s; cached at ${target}`);
    return { path: target, source: 'built' };
  } finally {
    clearInterval(ticker);
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

export async function obtainTemporalCli(
  cacheDir: string,
  progress: Progress,
  signal?: AbortSignal,
): Promise<CliLocation> {
  return findTemporalCli(cacheDir) ?? (await buildTemporalCli(cacheDir, progress, { signal }));
}
