import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export class WorkflowBundleError extends Error {
  override name = 'WorkflowBundleError';
}

/**
 * The workflow code, bundled by webpack in a child process (worker/bundle-workflows.ts) rather than in the worker's:
 * bundling in-process leaves about 100 MB of heap the worker keeps for its whole life (docs/benchmarks.md, worker
 * memory), while a child gives it all back when it exits. Aborting `signal` kills the child (SIGTERM).
 */
export async function bundleWorkflowsApart(
  tracing: boolean,
  { timeoutMs = 300_000, signal }: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-bundle-'));
  const file = path.join(dir, 'workflows.js');
  try {
    // TypeScript runs through tsx here as in the worker (no build step), whatever runs this process (jest does not).
    const args = ['--import', 'tsx', require.resolve('./bundle-workflows'), file, ...(tracing ? ['--tracing'] : [])];
    await new Promise<void>((resolve, reject) => {
      execFile(
        process.execPath,
        args,
        { cwd: path.resolve(__dirname, '..'), timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024, signal },
        (err, _stdout, stderr) => {
          if (!err) return resolve();
          reject(
            new WorkflowBundleError(
              `bundling the workflow code failed (${err.message.split('\n')[0]}): ${stderr.trim().slice(-2000) || 'no output'}. ` +
                'Fix: check that `npx tsc -p .` passes and that node_modules is installed (npm ci).',
            ),
          );
        },
      );
    });
    return fs.readFileSync(file, 'utf8');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
