import { spawn } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '..');

/**
 * Builds packages/client (ESM, CommonJS, declarations) in a child process, which does nothing when no source changed
 * since its last build; resolves with the line the build logged, or rejects with its error (with the signal's reason
 * once the child exited, when `signal` aborts it).
 */
export function buildClientPackage(signal?: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join('packages', 'client', 'build', 'main.ts')], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'pipe'],
      signal,
    });
    let output = '';
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (err) => signal?.aborted || reject(err));
    child.on('close', (code) => {
      if (signal?.aborted) reject(signal.reason);
      else if (code === 0) resolve(output.trim());
      else reject(new Error(output.trim() || `exit code ${code}`));
    });
  });
}
