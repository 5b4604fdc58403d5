/** A TCP proxy the tests put between a server and PostgreSQL, to cut the network without touching either. */
import { connect, createServer, type Server, type Socket } from 'node:net';

export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private stalled = false;
  private refusing = false;
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(): Promise<void> {
    this.server = createServer((client) => {
      this.track(client);
      if (this.refusing) return void client.resetAndDestroy(); // like a dead proxy: reset at once
      if (this.stalled) return; // accepted, never answered: like a partitioned network
      const upstream = connect(this.targetPort, this.targetHost);
      this.track(upstream);
      // Forward by hand rather than pipe(), so that stall() can drop bytes on live connections too.
      client.on('data', (d) => {
        if (!this.stalled) upstream.write(d);
      });
      upstream.on('data', (d) => {
        if (!this.stalled) client.write(d);
      });
      const close = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('close', close);
      upstream.on('close', close);
      client.on('error', close);
      upstream.on('error', close);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  private track(s: Socket) {
    this.sockets.add(s);
    s.on('close', () => this.sockets.delete(s));
    // A reset socket may report its own reset: nothing to do but let it close.
    s.on('error', () => {});
  }

  /** Packets stop flowing both ways, on open connections and new ones alike. */
  stall(): void {
    this.stalled = true;
  }

  /**
   * The proxy dies: every open connection is reset (ECONNRESET on both sides) and new ones are
   * reset as they arrive, until restore().
   */
  cut(): void {
    this.refusing = true;
    for (const s of this.sockets) s.resetAndDestroy();
  }

  /** The network comes back: connections cut during the stall are closed, new ones flow. */
  restore(): void {
    this.stalled = false;
    this.refusing = false;
    for (const s of this.sockets) s.destroy();
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** A started proxy in front of the server of `targetUrl` (PostgreSQL's), and that URL pointed through it. */
export async function proxyInFront(targetUrl: string): Promise<{ proxy: TcpProxy; url: URL }> {
  const target = new URL(targetUrl);
  const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
  await proxy.start();
  const url = new URL(targetUrl);
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  return { proxy, url };
}
