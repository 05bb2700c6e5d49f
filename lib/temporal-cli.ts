import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

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

/** TEMPORAL_CLI, then `temporal` on PATH, then the project's cached build; undefined when a build is needed. */
export function findTemporalCli(cacheDir: string, env = process.env): CliLocation | undefined {
  const configured = env.TEMPORAL_CLI?.trim();
  if (configured) {
    if (!isExecutable(configured)) {
      throw new TemporalCliError(`TEMPORAL_CLI=${configured} is not an executable file. Point it at a temporal binary or unset it.`);
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

/** Builds the pinned CLI from its Go module into the cache, reporting progress; minutes on a first run. */
export async function buildTemporalCli(cacheDir: string, progress: Progress): Promise<CliLocation> {
  const go = onPath('go') ?? (isExecutable('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : undefined);
  if (!go) {
    throw new TemporalCliError(
      'No Temporal CLI found and no Go toolchain to build one. Install one of: the Temporal CLI ' +
        '(https://docs.temporal.io/cli, then put `temporal` on PATH or set TEMPORAL_CLI=/path/to/temporal), ' +
        'or Go 1.23+ (https://go.dev/dl) so skillflow can build the CLI itself.',
    );
  }
  const target = cachedCliPath(cacheDir);
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-temporal-'));
  progress(`Building the Temporal CLI ${pinnedCliVersion} from its Go module (first run only; a few minutes on 2 cores)...`);
  const started = Date.now();
  let downloaded = 0;
  let compiled = 0;
  const output: string[] = [];
  const ticker = setInterval(() => {
    const seconds = Math.round((Date.now() - started) / 1000);
    progress(`  building Temporal CLI: ${downloaded} modules downloaded, ${compiled} packages compiled, ${seconds}s`);
  }, 10_000);
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(
        go,
        ['install', '-v', '-ldflags', `-X ${cliModule}/temporalcli.Version=${pinnedCliVersion.slice(1)}`, `${cliModule}/cmd/temporal@${pinnedCliVersion}`],
        { env: { ...process.env, GOBIN: staging, GOFLAGS: '-modcacherw' }, stdio: ['ignore', 'pipe', 'pipe'] },
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
      child.on('error', reject);
      child.on('close', resolve);
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

export async function obtainTemporalCli(cacheDir: string, progress: Progress): Promise<CliLocation> {
  return findTemporalCli(cacheDir) ?? (await buildTemporalCli(cacheDir, progress));
}

