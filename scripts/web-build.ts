import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '..');
const webDir = path.join(root, 'web');
const distDir = path.join(webDir, 'dist');
const viteConfig = path.join(webDir, 'vite.config.mts');
/** The digest of the sources a build was made from, written into the build once it succeeded. */
const stampFile = path.join(distDir, '.source-digest');
/** Besides web/ (its dist excepted), what the page's code imports and what pins the toolchain. */
const sharedSources = ['core', path.join('lib', 'client'), 'package-lock.json'];

export type WebBuild = { kind: 'built'; seconds: number } | { kind: 'up-to-date' } | { kind: 'no-web-app' };

/**
 * Builds the web app into web/dist with Vite (web/vite.config.mts) when its sources changed since the last build: web/
 * without web/dist, the core/ and lib/client/ code it imports, and package-lock.json (the toolchain's versions). Throws
 * with Vite's output when the build fails; a failed build leaves no digest, so the next run builds again. Aborting
 * `signal` stops Vite and rejects with the signal's reason once it has exited.
 */
export async function buildWebApp(say: (line: string) => void, signal?: AbortSignal): Promise<WebBuild> {
  if (!fs.existsSync(viteConfig)) return { kind: 'no-web-app' };
  const digest = sourceDigest();
  if (readStamp() === digest) return { kind: 'up-to-date' };
  const vite = path.join(root, 'node_modules', 'vite', 'bin', 'vite.js');
  if (!fs.existsSync(vite)) throw new Error(`${vite} is missing: install the dependencies (npm ci), then build again.`);
  say('Building the web app (web/, Vite) into web/dist: its sources changed since the last build...');
  const started = Date.now();
  await run(process.execPath, [vite, 'build', '--config', viteConfig, '--logLevel', 'warn'], signal);
  fs.writeFileSync(stampFile, `${digest}\n`);
  return { kind: 'built', seconds: (Date.now() - started) / 1000 };
}

export function describeWebBuild(build: WebBuild): string {
  switch (build.kind) {
    case 'built':
      return `Web app built into web/dist in ${build.seconds.toFixed(1)} s.`;
    case 'up-to-date':
      return 'Web app: web/dist is up to date.';
    case 'no-web-app':
      return 'Web app: no web/vite.config.mts, nothing to build.';
  }
}

function readStamp(): string | undefined {
  try {
    return fs.readFileSync(stampFile, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** SHA-256 over every source file's path and content, in a fixed order. */
function sourceDigest(): string {
  const hash = createHash('sha256');
  const files = [...listFiles(webDir, (dir) => dir !== distDir && path.basename(dir) !== 'node_modules')];
  for (const source of sharedSources) files.push(...listFiles(path.join(root, source), () => true));
  for (const file of files.sort()) {
    hash.update(path.relative(root, file)).update('\0').update(fs.readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

function listFiles(start: string, enter: (dir: string) => boolean): string[] {
  const stat = fs.statSync(start, { throwIfNoEntry: false });
  if (!stat) return [];
  if (stat.isFile()) return [start];
  const found: string[] = [];
  for (const entry of fs.readdirSync(start, { withFileTypes: true })) {
    const full = path.join(start, entry.name);
    if (entry.isDirectory()) {
      if (enter(full)) found.push(...listFiles(full, enter));
    } else if (entry.isFile()) found.push(full);
  }
  return found;
}

function run(command: string, args: string[], signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], signal });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // An abort kills the child and reports an error at once: the close below settles once it has exited.
    child.on('error', (err) => signal?.aborted || reject(err));
    child.on('close', (code) => {
      if (signal?.aborted) reject(signal.reason);
      else if (code === 0) resolve();
      else reject(new Error(`the web app's build (vite) failed:\n${output.trim()}`));
    });
  });
}

if (require.main === module) {
  buildWebApp((line) => console.log(`[web] ${line}`)).then(
    (build) => console.log(`[web] ${describeWebBuild(build)}`),
    (err: Error) => {
      console.error(`[web] ${err.message}`);
      process.exit(1);
    },
  );
}
