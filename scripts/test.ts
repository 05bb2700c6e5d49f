import { spawn } from 'node:child_process';
import path from 'node:path';
import { obtainTemporalCli, userCacheDir, TemporalCliError } from '../lib/temporal-cli';
import { ChromiumError, ensureChromium } from './chromium';
import { buildClientPackage } from './client-package';
import { buildWebApp, describeWebBuild } from './web-build';

const root = path.resolve(__dirname, '..');
const say = (line: string) => console.log(`[test] ${line}`);

function run(label: string, command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  say(label);
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: 'inherit', env });
    child.on('error', () => resolve(1));
    child.on('close', (code) => resolve(code ?? 1));
  });
}

async function main(): Promise<void> {
  const jestArgs = process.argv.slice(2);
  const cli = await obtainTemporalCli(userCacheDir(), say);
  say(`Temporal CLI: ${cli.path} (${cli.source})`);
  const bin = (name: string) => path.join(root, 'node_modules', '.bin', name);
  if (jestArgs.length === 0) {
    if ((await run('Type-checking (tsc)...', bin('tsc'), ['-p', '.'])) !== 0) process.exit(1);
    if ((await run('Type-checking the web app (tsc -p web)...', bin('tsc'), ['-p', 'web'])) !== 0) process.exit(1);
    if ((await run('Linting (eslint)...', bin('eslint'), ['.'])) !== 0) process.exit(1);
    if ((await run('Checking the formatting (prettier)...', bin('prettier'), ['--check', '.'])) !== 0) process.exit(1);
    if ((await run('Checking for import cycles (dpdm)...', 'npm', ['run', '--silent', 'lint:cycles'])) !== 0)
      process.exit(1);
    const coverage = ['-c', 'jest.policy-coverage.config.js'];
    if (
      (await run(
        'Checking that the policy tests cover every branch of the turn policy (jest, coverage)...',
        bin('jest'),
        coverage,
      )) !== 0
    )
      process.exit(1);
  }
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
  const code = await run('Running the test suite against a real Temporal dev server (jest)...', bin('jest'), jestArgs, {
    ...process.env,
    TEMPORAL_CLI: cli.path,
  });
  process.exit(code);
}

main().catch((err) => {
  console.error(
    `[test] ${err instanceof TemporalCliError || err instanceof ChromiumError ? err.message : err instanceof Error ? err.stack : String(err)}`,
  );
  process.exit(1);
});
