import fs from 'node:fs';
import net from 'node:net';
import type { TurnSnapshot } from '../../core/turn-snapshot';
import type { LiveChannel, LiveEvent, LiveListener } from './channel';
import { decodeFrame, LineSplitter } from './frames';
import { InProcessChannel } from './in-process';
import { prepareSocketDir } from './socket-path';

export class LiveSocketInUseError extends Error {
  override name = 'LiveSocketInUseError';
}

/**
 * The API's side of live events without Redis: a Unix socket (a named pipe on Windows) that workers on this machine
 * connect to and write live events into; each goes to this process's listeners of its turn, or nowhere. Turn states
 * they write are kept for every turn (this process is the only API on the machine), whether anyone listens or not.
 */
export class SocketBroker implements LiveChannel {
  private readonly local = new InProcessChannel();
  private readonly connections = new Set<net.Socket>();

  private constructor(
    private readonly server: net.Server,
    readonly socketPath: string,
  ) {
    server.on('connection', (socket) => this.accept(socket));
  }

  static async listen(socketPath: string): Promise<SocketBroker> {
    const server = net.createServer();
    prepareSocketDir(socketPath);
    await listenReplacingStale(server, socketPath);
    if (process.platform !== 'win32') fs.chmodSync(socketPath, 0o600);
    return new SocketBroker(server, socketPath);
  }

  publish(turnId: string, event: LiveEvent): void {
    this.local.publish(turnId, event);
  }

  subscribe(turnId: string, listener: LiveListener): () => void {
    return this.local.subscribe(turnId, listener);
  }

  async subscribed(): Promise<void> {
    // Local: a listener is in place as soon as subscribe returns.
  }

  publishState(turnId: string, snapshot: TurnSnapshot): void {
    this.local.publishState(turnId, snapshot);
  }

  latestState(turnId: string): Promise<TurnSnapshot | undefined> {
    return this.local.latestState(turnId);
  }

  get publishers(): number {
    return this.connections.size;
  }

  async close(): Promise<void> {
    for (const socket of this.connections) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await this.local.close();
  }

  private accept(socket: net.Socket): void {
    this.connections.add(socket);
    socket.setEncoding('utf8');
    const lines = new LineSplitter((line) => {
      const frame = decodeFrame(line);
      if (!frame) return;
      if ('event' in frame) this.local.publish(frame.turnId, frame.event);
      else if ('state' in frame) this.local.publishState(frame.turnId, frame.state);
      else this.local.forgetState(frame.turnId);
    });
    socket.on('data', (chunk: string) => {
      if (!lines.push(chunk)) socket.destroy();
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => this.connections.delete(socket));
  }
}

/** A socket file left by a process that died is removed; one that still answers belongs to a live API. */
async function listenReplacingStale(server: net.Server, socketPath: string): Promise<void> {
  try {
    await listenOn(server, socketPath);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || process.platform === 'win32') throw err;
    if (await answers(socketPath)) {
      throw new LiveSocketInUseError(`Another process already serves live events on ${socketPath}.`);
    }
    fs.rmSync(socketPath, { force: true });
    await listenOn(server, socketPath);
  }
}

function listenOn(server: net.Server, socketPath: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const fail = (err: Error) => reject(err);
    server.once('error', fail);
    server.listen(socketPath, () => {
      server.off('error', fail);
      resolve();
    });
  });
}

function answers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.connect(socketPath);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}
