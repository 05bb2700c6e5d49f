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

/**
 * True when node_modules holds what package-lock.json pins: every package it lists at the version it lists, as npm's
 * record of what it installed (node_modules/.package-lock.json) says. Optional packages may be absent (those of other
 * platforms are). The contents decide, not the files' times, which a checkout, a branch switch or a worktree changes.
 */
function dependenciesInstalled() {
  const read = (file) => {
    try {
      return JSON.parse(fs.readFileSync(path.join(root, file), 'utf8')).packages ?? {};
    } catch {
      return undefined;
    }
  };
  const pinned = read('package-lock.json');
  const installed = read(path.join('node_modules', '.package-lock.json'));
  if (!pinned || !installed || !fs.existsSync(path.join(root, 'node_modules', 'tsx'))) return false;
  return Object.entries(pinned).every(
    ([where, pin]) => where === '' || installed[where]?.version === pin.version || (pin.optional && !installed[where]),
  );
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
// The task shuts its children down in order when a signal reaches it, so pass each on and wait for it to end. Ctrl-C
// reaches the whole foreground process group, the task included; a supervisor's SIGTERM may reach this process only.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => stopTask(signal));
let stopSignal;
function stopTask(signal) {
  if (stopSignal || child.exitCode !== null || child.signalCode !== null) return;
  stopSignal = signal;
  child.kill(signal);
}
// A shell between npm and this process (npm runs scripts with `sh -c`) dies of the SIGTERM npm passes on, and this
// process never hears it: when the process that started this one is gone, stop the task as on SIGTERM.
const parent = process.ppid;
const orphaned = setInterval(() => {
  try {
    process.kill(parent, 0);
  } catch (err) {
    if (err.code === 'EPERM') return;
    clearInterval(orphaned);
    console.error('[setup] The process that started this one is gone: stopping.');
    stopTask('SIGTERM');
  }
}, 500);
child.on('close', (code, signal) => {
  clearInterval(orphaned);
  process.exit(code ?? (signal ? 1 : 0));
});
