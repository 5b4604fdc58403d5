/**
 * A small HTTP load balancer for the tests, as the scale-out example's nginx: round-robin over the
 * servers, no stickiness, each request's client address in X-Forwarded-For; it notes which server
 * answered each request.
 */
import { createServer, request, type Server } from 'node:http';

export class Balancer {
  private server: Server | undefined;
  private next = 0;
  /** The servers, by URL (http://host:port); set once they listen. */
  backends: string[] = [];
  /** Which server each request went to, in order: `<method> <path> -> <backend>`. */
  readonly served: { method: string; path: string; backend: string }[] = [];
  url = '';

  async start(): Promise<string> {
    this.server = createServer((incoming, outgoing) => {
      const backend = this.backends[this.next++ % this.backends.length];
      if (backend === undefined) {
        outgoing.writeHead(502).end('no server yet');
        return;
      }
      this.served.push({ method: incoming.method ?? 'GET', path: incoming.url ?? '/', backend });
      const target = new URL(backend);
      const upstream = request(
        {
          host: target.hostname,
          port: target.port,
          method: incoming.method,
          path: incoming.url,
          // As nginx's `proxy_set_header X-Forwarded-For $remote_addr`; the Host is the client's.
          headers: { ...incoming.headers, 'x-forwarded-for': incoming.socket.remoteAddress ?? '' },
        },
        (answer) => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
        },
      );
      upstream.on('error', () => outgoing.headersSent || outgoing.writeHead(502).end());
      incoming.pipe(upstream);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    this.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    return this.url;
  }

  /** The distinct servers that answered requests whose path starts with `prefix`. */
  answeredBy(prefix: string): Set<string> {
    return new Set(this.served.filter((s) => s.path.startsWith(prefix)).map((s) => s.backend));
  }

  close(): Promise<void> {
    this.server?.closeAllConnections();
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
