import { spawn, type ChildProcess } from 'node:child_process';
import readline from 'node:readline';

/** A child process whose output lines are prefixed with its name, so three logs stay readable in one terminal. */
export function spawnLabelled(
  label: string,
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  onLine: (line: string) => void = () => undefined,
): ChildProcess {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const prefix = (stream: NodeJS.ReadableStream, out: NodeJS.WriteStream) => {
    readline.createInterface({ input: stream }).on('line', (line) => {
      onLine(line);
      out.write(line.startsWith(`[${label}]`) ? `${line}\n` : `[${label}] ${line}\n`);
    });
  };
  prefix(child.stdout!, process.stdout);
  prefix(child.stderr!, process.stderr);
  return child;
}

/** SIGTERM, then SIGKILL after the grace period; resolves once the process is gone. */
export async function stopProcess(child: ChildProcess, graceMs = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}
