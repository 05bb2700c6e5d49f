// Runs before dependencies exist, so plain Node only: installs what is missing, then hands over to the TypeScript task.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [task, ...args] = process.argv.slice(2);
const tasks = { start: 'scripts/start.ts', test: 'scripts/test.ts', topology: 'scripts/topology/main.ts' };
if (!tasks[task]) {
  console.error(`usage: node scripts/bootstrap.mjs <${Object.keys(tasks).join('|')}> [args...]`);
  process.exit(2);
}

// package.json's engines.node (">=MAJOR.MINOR.PATCH") is the one statement of the Node.js this runs on.
const required = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).engines.node.replace(
  /^>=\s*/,
  '',
);
const older = (a, b) => {
  const [x, y] = [a, b].map((version) => version.split('.').map(Number));
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] < y[i];
  return false;
};
if (older(process.versions.node, required)) {
  console.error(
    `skillflow needs Node.js ${required} or newer; this is ${process.version}. Install a current Node.js 20 or 22 (https://nodejs.org) and run again.`,
  );
  process.exit(1);
}

function dependenciesInstalled() {
  const installed = path.join(root, 'node_modules', '.package-lock.json');
  const lock = path.join(root, 'package-lock.json');
  if (!fs.existsSync(installed) || !fs.existsSync(path.join(root, 'node_modules', 'tsx'))) return false;
  return fs.statSync(installed).mtimeMs >= fs.statSync(lock).mtimeMs;
}

async function installDependencies() {
  console.log('[setup] Installing dependencies with `npm ci` (first run only; about a minute)...');
  const started = Date.now();
  const ticker = setInterval(() => {
    console.log(`[setup]   still installing dependencies, ${Math.round((Date.now() - started) / 1000)}s`);
  }, 10_000);
  const code = await new Promise((resolve) => {
    const npm = spawn('npm', ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
    npm.on('error', () => resolve(1));
    npm.on('close', resolve);
  });
  clearInterval(ticker);
  if (code !== 0) {
    console.error('[setup] `npm ci` failed (see above). Check your network access to the npm registry and run again.');
    process.exit(1);
  }
  console.log(`[setup] Dependencies installed in ${Math.round((Date.now() - started) / 1000)}s.`);
}

if (!dependenciesInstalled()) await installDependencies();

const child = spawn(process.execPath, ['--import', 'tsx', tasks[task], ...args], { cwd: root, stdio: 'inherit' });
// Ctrl-C reaches the whole foreground process group; the task shuts its children down in order, so wait for it.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (signal !== 'SIGINT') child.kill(signal);
  });
}
child.on('close', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
