import net from 'node:net';
import type { TurnSnapshot } from '../../core/turn-snapshot';
import type { LiveChannel, LiveEvent, LiveListener } from './channel';
import { encodeFrame, encodeStateFrame } from './frames';
import { InProcessChannel } from './in-process';
import { untrustedSocketReason } from './socket-path';

export interface SocketPublisherOptions {
  /** Bytes queued on the socket beyond which events are dropped rather than buffered. */
  maxBufferedBytes?: number;
  minReconnectMs?: number;
  maxReconnectMs?: number;
  log?: (line: string) => void;
}

/**
 * The worker's side of the local socket: writes each event to the API's broker while connected, drops it otherwise
 * (or when the socket backs up), and reconnects with backoff for as long as it lives. Nothing here waits or throws.
 * It connects only to a socket its own user owns.
 */
export class SocketPublisher implements LiveChannel {
  private readonly local = new InProcessChannel();
  private socket: net.Socket | undefined;
  private connected = false;
  private closed = false;
  private retryMs: number;
  private retryTimer: NodeJS.Timeout | undefined;
  private reportedDown = false;
  private reportedUntrusted = false;
  private readonly maxBufferedBytes: number;
  private readonly minReconnectMs: number;
  private readonly maxReconnectMs: number;

  constructor(
    readonly socketPath: string,
    private readonly options: SocketPublisherOptions = {},
  ) {
    this.maxBufferedBytes = options.maxBufferedBytes ?? 1024 * 1024;
    this.minReconnectMs = options.minReconnectMs ?? 250;
    this.maxReconnectMs = options.maxReconnectMs ?? 5_000;
    this.retryMs = this.minReconnectMs;
    this.connect();
  }

  get isConnected(): boolean {
    return this.connected;
  }

  publish(turnId: string, event: LiveEvent): void {
    this.local.publish(turnId, event);
    this.write(() => encodeFrame(turnId, event));
  }

  async subscribed(): Promise<void> {
    // Local: a listener is in place as soon as subscribe returns.
  }

  publishState(turnId: string, snapshot: TurnSnapshot): void {
    this.write(() => encodeStateFrame(turnId, snapshot));
  }

  /** States are kept by the API's broker, not by the worker that writes them. */
  async latestState(): Promise<TurnSnapshot | undefined> {
    return undefined;
  }

  private write(frame: () => string | null): void {
    const socket = this.socket;
    if (!this.connected || !socket || socket.writableLength > this.maxBufferedBytes) return;
    const line = frame();
    if (line === null) return;
    try {
      socket.write(line);
    } catch {
      // A write on a socket that just failed: the 'close' handler reconnects.
    }
  }

  subscribe(turnId: string, listener: LiveListener): () => void {
    return this.local.subscribe(turnId, listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    const socket = this.socket;
    this.socket = undefined;
    this.connected = false;
    socket?.destroy();
    await this.local.close();
  }

  private connect(): void {
    if (this.closed) return;
    const untrusted = untrustedSocketReason(this.socketPath);
    if (untrusted) {
      if (!this.reportedUntrusted)
        this.options.log?.(`live events: not connecting: ${untrusted}; deltas are dropped (retrying)`);
      this.reportedUntrusted = true;
      this.scheduleReconnect();
      return;
    }
    this.reportedUntrusted = false;
    const socket = net.connect(this.socketPath);
    this.socket = socket;
    socket.unref();
    socket.on('connect', () => {
      this.connected = true;
      this.retryMs = this.minReconnectMs;
      if (this.reportedDown) this.options.log?.(`live events: connected to ${this.socketPath}`);
      this.reportedDown = false;
    });
    // The broker never writes; reading keeps the socket flowing so a close is noticed.
    socket.on('data', () => undefined);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (this.socket !== socket) return;
      this.connected = false;
      this.socket = undefined;
      if (!this.reportedDown) {
        this.options.log?.(
          `live events: no API listening on ${this.socketPath}; deltas are dropped until one is (retrying)`,
        );
        this.reportedDown = true;
      }
      this.scheduleReconnect();
    });
  }

  private scheduleReconnect(): void {
    if (this.closed) return;
    this.retryTimer = setTimeout(() => this.connect(), this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.retryMs * 2, this.maxReconnectMs);
  }
}
