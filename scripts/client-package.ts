import { spawn } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '..');

/**
 * Builds packages/client (ESM, CommonJS, declarations) in a child process, which does nothing when no source changed
 * since its last build; resolves with the line the build logged, or rejects with its error.
 */
export function buildClientPackage(): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join('packages', 'client', 'build', 'main.ts')], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let output = '';
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(output.trim()) : reject(new Error(output.trim() || `exit code ${code}`)),
    );
  });
}
