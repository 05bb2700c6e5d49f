import { spawn } from 'node:child_process';
import fs from 'node:fs';

export class ChromiumError extends Error {
  override name = 'ChromiumError';
}

/** Where test/codec-ui.test.ts finds the browser: SKILLFLOW_TEST_CHROMIUM, else Debian's package. */
export const chromiumPath = (env: NodeJS.ProcessEnv = process.env): string =>
  env.SKILLFLOW_TEST_CHROMIUM || '/usr/bin/chromium';

function run(command: string, args: string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    child.on('error', () => resolve(1));
    child.on('close', (code) => resolve(code ?? 1));
  });
}

/**
 * The suite opens the Temporal UI in a real browser (test/codec-ui.test.ts). When the machine has none, installs
 * Debian's chromium package (as root, with apt-get), once; otherwise says how to get one.
 */
export async function ensureChromium(say: (line: string) => void): Promise<void> {
  const wanted = chromiumPath();
  if (fs.existsSync(wanted)) return;
  const canInstall =
    !process.env.SKILLFLOW_TEST_CHROMIUM && process.getuid?.() === 0 && fs.existsSync('/usr/bin/apt-get');
  if (!canInstall) {
    throw new ChromiumError(
      `No chromium at ${wanted}, which test/codec-ui.test.ts needs: run \`apt-get install chromium\` as root, or set SKILLFLOW_TEST_CHROMIUM to a Chromium binary.`,
    );
  }
  say('Installing chromium (Debian package, first run only; test/codec-ui.test.ts opens the Temporal UI in it)...');
  const started = Date.now();
  if (
    (await run('apt-get', ['update', '-qq'])) !== 0 ||
    (await run('apt-get', ['install', '-y', '-qq', 'chromium'])) !== 0 ||
    !fs.existsSync(wanted)
  ) {
    throw new ChromiumError(
      'Installing chromium with apt-get failed (see above). Check access to the Debian package mirror, or set SKILLFLOW_TEST_CHROMIUM.',
    );
  }
  say(`Installed chromium in ${Math.round((Date.now() - started) / 1000)} s.`);
}
