import { spawn } from 'node:child_process';
import path from 'node:path';
import { obtainTemporalCli, userCacheDir, TemporalCliError } from '../lib/temporal-cli';
import { ChromiumError, ensureChromium } from './chromium';
import { buildClientPackage } from './client-package';
import { buildWebApp, describeWebBuild } from './web-build';

const root = path.resolve(__dirname, '..');
const say = (line: string) => console.log(`[test] ${line}`);
const bin = (name: string) => path.join(root, 'node_modules', '.bin', name);

interface Step {
  label: string;
  command: string;
  args: string[];
  /** Added to the environment. */
  env?: NodeJS.ProcessEnv;
}

/**
 * The checks that need no Temporal server, run at the same time (each is one process, mostly on one core), before
 * the integration tests. tsc keeps what it learnt in .cache/ (it rechecks whatever a change can affect); ESLint does
 * not, as its cache would keep a file's result when only the types it imports changed.
 */
const checks: Step[] = [
  {
    label: 'type-check (tsc)',
    command: bin('tsc'),
    args: ['-p', '.', '--incremental', '--tsBuildInfoFile', path.join('.cache', 'tsc', 'tsconfig.tsbuildinfo')],
  },
  {
    label: 'type-check of the web app (tsc -p web)',
    command: bin('tsc'),
    args: ['-p', 'web', '--incremental', '--tsBuildInfoFile', path.join('.cache', 'tsc', 'web.tsbuildinfo')],
  },
  { label: 'lint (eslint)', command: bin('eslint'), args: ['.'] },
  {
    label: 'formatting (prettier --check)',
    command: bin('prettier'),
    args: ['--check', '.', '--cache', '--cache-strategy', 'content'],
  },
  { label: 'import cycles (dpdm)', command: 'npm', args: ['run', '--silent', 'lint:cycles'] },
  {
    label: "the policy tests' coverage of the turn policy (jest, coverage)",
    command: bin('jest'),
    args: ['-c', 'jest.policy-coverage.config.js'],
  },
  {
    label: 'the unit tests (jest, no Temporal server; the policy tests are the coverage run above)',
    command: bin('jest'),
    args: ['--selectProjects', 'unit'],
    env: { SKILLFLOW_TEST_COVERED_APART: '1' },
  },
];

function run(label: string, command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  say(label);
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: 'inherit', env });
    child.on('error', () => resolve(1));
    child.on('close', (code) => resolve(code ?? 1));
  });
}

/** Runs a step with its output kept, then prints that output (all of it when the step failed) and its time. */
function runQuietly(step: Step): Promise<boolean> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(step.command, step.args, {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...step.env },
    });
    const output: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
    const finish = (ok: boolean, why = '') => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      say(`${ok ? 'passed' : 'FAILED'}: ${step.label} (${seconds} s)${why}`);
      if (!ok) process.stdout.write(Buffer.concat(output));
      resolve(ok);
    };
    child.on('error', (err) => finish(false, `: ${err.message}`));
    child.on('close', (code) => finish(code === 0));
  });
}

async function main(): Promise<void> {
  const jestArgs = process.argv.slice(2);
  const cli = await obtainTemporalCli(userCacheDir(), say);
  say(`Temporal CLI: ${cli.path} (${cli.source})`);
  if (jestArgs.length === 0 || jestArgs.some((arg) => arg.includes('codec-ui') || arg.includes('web-app')))
    await ensureChromium(say);
  say('Building the client package (packages/client), unless it is up to date...');
  say(await buildClientPackage());
  try {
    say(describeWebBuild(await buildWebApp(say)));
  } catch (err) {
    console.error(`[test] ${(err as Error).message}`);
    process.exit(1);
  }
  const env = { ...process.env, TEMPORAL_CLI: cli.path };
  if (jestArgs.length > 0) {
    process.exit(await run('Running the tests named (jest)...', bin('jest'), jestArgs, env));
  }
  say(`Checking at the same time: ${checks.map((step) => step.label).join('; ')}...`);
  const passed = await Promise.all(checks.map(runQuietly));
  if (passed.includes(false)) process.exit(1);
  const integration = ['--selectProjects', 'integration'];
  process.exit(
    await run(
      'Running the integration tests against a real Temporal dev server (jest)...',
      bin('jest'),
      integration,
      env,
    ),
  );
}

main().catch((err) => {
  console.error(
    `[test] ${err instanceof TemporalCliError || err instanceof ChromiumError ? err.message : err instanceof Error ? err.stack : String(err)}`,
  );
  process.exit(1);
});
