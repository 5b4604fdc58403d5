/**
 * @module `/metrics` on its own listener (TOOLGATE_METRICS_PORT): kept off the public port, so the
 * metrics are scraped from the private network and never reachable by API callers.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PrometheusMetrics } from './prometheus.js';

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

export async function serveMetrics(
  metrics: PrometheusMetrics,
  host: string,
  port: number,
): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url !== '/metrics' && !req.url?.startsWith('/metrics?'))) {
      res.writeHead(req.url === '/metrics' ? 405 : 404, { 'content-type': 'text/plain' });
      res.end(req.url === '/metrics' ? 'GET only\n' : 'Not found: the metrics are at /metrics\n');
      return;
    }
    metrics.registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'content-type': metrics.registry.contentType });
        res.end(text);
      },
      (err: Error) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`metrics could not be collected: ${err.message}\n`);
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}/metrics`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
