import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** How a server's process ended: the code it exited with, or the signal that ended it. */
export type ServerExit = { kind: 'code'; code: number } | { kind: 'signal'; signal: NodeJS.Signals };

export const describeExit = (exit: ServerExit): string =>
  exit.kind === 'code' ? `it exited with code ${exit.code}` : `it was ended by ${exit.signal}`;

export interface ServerProcessParams {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

/** How long the pipes of a server that exited may stay open (a process it started holds them) before its connection counts as closed. */
const pipesAfterExitMs = 250;
/** How long `close` waits for the server to exit after its input ends, and again after SIGTERM, before SIGKILL. */
const exitGraceMs = 2_000;

/**
 * The stdio transport of an MCP server: the server is a child process that reads JSON-RPC lines on stdin and writes
 * them on stdout (its stderr is ignored). Unlike the MCP library's own, it keeps how the process ended (`exit`), so a
 * call the server died during can say so, and it closes when the process exits even if a process the server started
 * keeps the pipes open.
 */
export class ServerProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Set once the process has ended. */
  exit: ServerExit | null = null;
  private child: ChildProcessByStdio<Writable, Readable, null> | null = null;
  private readonly buffer = new ReadBuffer();
  private ended = false;

  constructor(private readonly params: ServerProcessParams) {}

  start(): Promise<void> {
    const { command, args, env, cwd } = this.params;
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, {
        env,
        ...(cwd ? { cwd } : {}),
        stdio: ['pipe', 'pipe', 'ignore'],
        shell: false,
      });
      this.child = child;
      child.once('spawn', () => resolve());
      child.once('error', (err) => {
        reject(err);
        this.onerror?.(err);
        this.closed();
      });
      child.once('exit', (code, signal) => {
        this.exit = signal ? { kind: 'signal', signal } : { kind: 'code', code: code ?? 0 };
        setTimeout(() => this.closed(), pipesAfterExitMs).unref();
      });
      child.once('close', () => this.closed());
      child.stdin.on('error', (err) => this.onerror?.(err));
      child.stdout.on('error', (err) => this.onerror?.(err));
      child.stdout.on('data', (chunk: Buffer) => this.read(chunk));
    });
  }

  private read(chunk: Buffer): void {
    try {
      this.buffer.append(chunk);
    } catch (err) {
      this.onerror?.(err as Error);
      void this.close();
      return;
    }
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.buffer.readMessage();
      } catch (err) {
        this.onerror?.(err as Error);
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.ended ? null : this.child?.stdin;
    if (!stdin?.writable) return Promise.reject(new McpError(ErrorCode.ConnectionClosed, 'Connection closed'));
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /** Ends the server's input, then asks it to stop (SIGTERM), then stops it (SIGKILL), waiting a little between. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || this.ended) return this.closed();
    const gone = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const waited = () => Promise.race([gone, new Promise<void>((resolve) => setTimeout(resolve, exitGraceMs).unref())]);
    child.stdin.end();
    await waited();
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      if (child.exitCode !== null || child.signalCode !== null) break;
      child.kill(signal);
      if (signal === 'SIGTERM') await waited();
    }
    this.closed();
  }

  private closed(): void {
    if (this.ended) return;
    this.ended = true;
    // Pipes a process the server started may still hold: let go of them, so that process sees its input end.
    this.child?.stdin.destroy();
    this.child?.stdout.destroy();
    this.buffer.clear();
    this.onclose?.();
  }
}
