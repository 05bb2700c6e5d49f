import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import {
  startTemporalServer,
  writeServerConfig,
  type PostgresTarget,
  type RunningServer,
  type ServerBuild,
} from '../../lib/temporal-server';
import type { TemporalConnectionOptions } from '../../lib/temporal-connection';
import { workerReadyMarker } from '../../worker/ready';
import type { TopologyTls } from './tls';

export const repoRoot = path.resolve(__dirname, '..', '..');

/** A skillflow process of the topology: started from a working tree (so a later build can replace it), killable. */
export class NodeProcess {
  private child: ChildProcess | undefined;
  private exitedPromise: Promise<void> = Promise.resolve();
  starts = 0;

  constructor(
    readonly name: string,
    private readonly entry: 'worker/main.ts' | 'api/server.ts',
    private readonly env: NodeJS.ProcessEnv,
    private readonly logDir: string,
    /** The working tree it runs from: the repository, or another build of it. */
    public root = repoRoot,
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts it and resolves once it is ready: the worker polls, the API answers /readyz. */
  async start(timeoutMs = 120_000): Promise<void> {
    const logFile = path.join(this.logDir, `${this.name}.log`);
    const log = fs.openSync(logFile, 'a');
    fs.writeSync(log, `--- start ${++this.starts} at ${new Date().toISOString()} from ${this.root}\n`);
    // A worker starts as deployed: scripts/worker.sh, with its memory settings (it execs node: the PID is the worker's).
    const [command, args] =
      this.entry === 'worker/main.ts'
        ? ['sh', ['scripts/worker.sh']]
        : [process.execPath, ['--import', 'tsx', this.entry]];
    const child = spawn(command, args, {
      cwd: this.root,
      env: { ...this.env, NODE: process.execPath },
      stdio: ['ignore', log, log],
    });
    fs.closeSync(log);
    this.child = child;
    this.exitedPromise = new Promise((resolve) => child.once('exit', () => resolve()));
    const deadline = Date.now() + timeoutMs;
    while (!(await this.ready(logFile))) {
      if (!this.running) throw new Error(`${this.name} exited during start-up; see ${logFile}`);
      if (Date.now() > deadline)
        throw new Error(`${this.name} was not ready within ${timeoutMs / 1000} s; see ${logFile}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.running) this.child!.kill(signal);
    return this.exitedPromise;
  }

  private async ready(logFile: string): Promise<boolean> {
    if (this.entry === 'worker/main.ts') {
      const text = fs.readFileSync(logFile, 'utf8');
      return text.slice(text.lastIndexOf('--- start')).includes(workerReadyMarker);
    }
    const port = this.env.PORT;
    return fetch(`http://127.0.0.1:${port}/readyz`).then(
      (response) => response.ok,
      () => false,
    );
  }
}

/** The Temporal server of the topology: on PostgreSQL, mTLS on its frontend, killable and restartable on the same databases. */
export class TemporalService {
  private running: RunningServer | undefined;
  private config!: { root: string; env: string };
  address = '';

  constructor(
    private readonly build: ServerBuild,
    private readonly dir: string,
    private readonly postgres: PostgresTarget,
    private readonly dynamicConfigFile: string,
    private readonly tls: TopologyTls,
  ) {}

  /** How a client with the topology's client certificate reaches the frontend. */
  connection(certificate: 'client' | 'stranger' = 'client'): TemporalConnectionOptions {
    const pair = this.tls[certificate];
    return {
      address: this.address,
      tls: {
        serverNameOverride: this.tls.server.serverName,
        serverRootCACertificate: fs.readFileSync(this.tls.caFile),
        clientCertPair: { crt: fs.readFileSync(pair.certFile), key: fs.readFileSync(pair.keyFile) },
      },
    };
  }

  get pid(): number | undefined {
    return this.running?.process.pid;
  }

  async start(): Promise<void> {
    if (!this.address) {
      this.address = `127.0.0.1:${await freeServerPort()}`;
      const ports = {
        frontendHttp: await freeServerPort(),
        frontendMembership: await freeServerPort(),
        history: await freeServerPort(),
        historyMembership: await freeServerPort(),
        matching: await freeServerPort(),
        matchingMembership: await freeServerPort(),
        worker: await freeServerPort(),
        workerMembership: await freeServerPort(),
      };
      this.config = writeServerConfig({
        dir: this.dir,
        frontendAddress: this.address,
        ports,
        postgres: this.postgres,
        dynamicConfigFile: this.dynamicConfigFile,
        tls: this.tls.server,
      });
    }
    this.running = await startTemporalServer(
      this.build,
      this.config,
      this.connection(),
      path.join(this.dir, 'temporal-server.log'),
    );
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (!this.running) return;
    this.running.process.kill(signal);
    await this.running.exited;
    this.running = undefined;
  }
}

/**
 * A free port below 32768: Temporal keeps membership ports in a SMALLINT column, so the OS's ephemeral ports (usually
 * 32768 and up) make the server fail at start-up ("out of range for type smallint").
 */
async function freeServerPort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('No free port between 20000 and 32000 for the Temporal server');
}
