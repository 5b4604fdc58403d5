/**
 * @module The upstream of the `proxied` scenarios: the operator's service a catalogue tool forwards
 * to, in its own process. A bare `node:http` server that answers every POST with the same ~1 KB JSON
 * object, `{"results":[...10 small objects...],"status":"ok"}`, prepared once as a Buffer: it drains
 * the request body without parsing it, so it spends as little of the shared cores per call as a Node
 * server can, and the same for toolgate's calls as for the baseline's. Any other method gets 405.
 * Prints `upstream listening <url>` once it listens (PORT, default 0 = any free port); it stops on
 * SIGTERM/SIGINT and when its stdin closes (its parent is gone).
 */
import { createServer } from 'node:http';

/** Ten results of about 100 bytes each: with the envelope, 1 KB or a little more. */
export const RESULTS = Array.from({ length: 10 }, (_, i) => ({
  id: `rec_${String(i + 1).padStart(4, '0')}`,
  name: `Result number ${i + 1}`,
  url: `https://example.com/records/${i + 1}`,
  score: Math.round((1 - i / 20) * 1000) / 1000,
}));

const ANSWER = Buffer.from(JSON.stringify({ results: RESULTS, status: 'ok' }));
const HEADERS = { 'content-type': 'application/json', 'content-length': String(ANSWER.length) };

const server = createServer((req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(405, { 'content-length': '0' }).end();
    return;
  }
  // Drain the body (never parsed), then answer: the connection stays reusable for the next call.
  req.on('data', () => {});
  req.on('end', () => {
    res.writeHead(200, HEADERS).end(ANSWER);
  });
});
// Keep idle pooled connections open longer than the clients' keep-alive (undici: 10 s here).
server.keepAliveTimeout = 60_000;

server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(
    `upstream listening http://${process.env.HOST ?? '127.0.0.1'}:${port} (${ANSWER.length} bytes per answer)\n`,
  );
});

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();
