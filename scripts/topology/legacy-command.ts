import { execFile } from 'node:child_process';
import path from 'node:path';
import type { KindCount, MoveOutcome } from '../../cli/legacy';
import { repoRoot } from './cluster';

export type { MoveOutcome };
export type LegacyCount = KindCount;

/**
 * `skillflow legacy --json` (with `--move`, its outcomes) as an operator runs it: the deployed build's CLI in a process
 * of its own, with the workers' Temporal settings, from a folder without a .env.
 */
export function legacyCommand(
  env: NodeJS.ProcessEnv,
  cwd: string,
  move: boolean,
): Promise<{ counts: LegacyCount[]; outcomes: MoveOutcome[]; seconds: number }> {
  const args = [path.join(repoRoot, 'bin', 'skillflow.js'), 'legacy', '--json'];
  if (move) args.push('--move', '--wait', '20', '--by', 'topology');
  const started = Date.now();
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { cwd, env, timeout: 180_000 }, (error, stdout, stderr) => {
      if (error && !stdout.trim())
        return reject(new Error(`skillflow ${args.slice(1).join(' ')} failed: ${stderr.trim() || error.message}`));
      try {
        const body = JSON.parse(stdout) as { counts: LegacyCount[]; outcomes?: MoveOutcome[] };
        resolve({ counts: body.counts, outcomes: body.outcomes ?? [], seconds: (Date.now() - started) / 1000 });
      } catch {
        reject(
          new Error(
            `skillflow ${args.slice(1).join(' ')} printed no JSON: ${stdout.slice(0, 300)} ${stderr.slice(0, 300)}`,
          ),
        );
      }
    });
  });
}
