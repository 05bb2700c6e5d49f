import net from 'node:net';

export interface TcpProxy {
  /** Where clients connect instead of the service: `127.0.0.1:<port>`. */
  host: string;
  port: number;
  /** Stops forwarding either way on every connection, open or new, as a hung service or network does (nothing is closed). */
  freeze(): void;
  /** Forwards again, what was held first. */
  thaw(): void;
  /** Closes every connection and refuses new ones (reset), as a service that died. */
  cut(): void;
  /** Accepts and forwards again. */
  restore(): void;
  close(): Promise<void>;
}

/**
 * A TCP proxy of the test's own in front of a shared service (PostgreSQL, Redis), to make the service hang or die for
 * the test's connections only: the shared service itself is never stopped.
 */
export async function startTcpProxy(upstreamPort: number, upstreamHost = '127.0.0.1'): Promise<TcpProxy> {
  const links = new Set<Link>();
  let frozen = false;
  let refusing = false;
  const server = net.createServer((client) => {
    if (refusing) {
      client.resetAndDestroy();
      return;
    }
    const link = new Link(client, net.connect(upstreamPort, upstreamHost), frozen, () => links.delete(link));
    links.add(link);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    host: '127.0.0.1',
    port,
    freeze() {
      frozen = true;
      for (const link of links) link.freeze();
    },
    thaw() {
      frozen = false;
      for (const link of links) link.thaw();
    },
    cut() {
      refusing = true;
      for (const link of [...links]) link.reset();
    },
    restore() {
      refusing = false;
    },
    async close() {
      for (const link of [...links]) link.reset();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** One client connection and its upstream: bytes forwarded as they come, or held while frozen. */
class Link {
  private readonly held: Array<[net.Socket, Buffer]> = [];

  constructor(
    private readonly client: net.Socket,
    private readonly upstream: net.Socket,
    private frozen: boolean,
    onEnd: () => void,
  ) {
    const end = () => {
      onEnd();
      client.destroy();
      upstream.destroy();
    };
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      from.on('data', (chunk: Buffer) => (this.frozen ? this.held.push([to, chunk]) : to.write(chunk)));
      from.on('error', end).on('close', end);
    }
  }

  freeze(): void {
    this.frozen = true;
  }

  thaw(): void {
    this.frozen = false;
    for (const [to, chunk] of this.held.splice(0)) to.write(chunk);
  }

  reset(): void {
    this.client.resetAndDestroy();
    this.upstream.destroy();
  }
}
