/**
 * @module The baseline of the `proxied` scenarios: a bare Fastify server in its own process whose one
 * route, `POST /api/v1/tools/:name`, forwards the JSON body to the bench's upstream (UPSTREAM_URL) with
 * toolgate's own HTTP client (`Upstreams` from src/upstream/forward.ts: the same undici Agent, the
 * same options, the same request headers and answer reading) and returns the upstream's `results`
 * wrapped as toolgate wraps them (`{results, status, metadata}`). Same Node, same Fastify, same JSON
 * body parsing as toolgate, and nothing else: no auth, no store, no schema check, no metering, no
 * logging. It ignores the bearer key. Prints `proxy baseline listening <url>` once it listens (PORT,
 * default 0); it stops on SIGTERM/SIGINT and when its stdin closes (its parent is gone).
 */
import Fastify from 'fastify';
import { Upstreams, type UpstreamTarget } from '../src/upstream/forward.js';

const upstreamUrl = process.env.UPSTREAM_URL;
if (!upstreamUrl) throw new Error('UPSTREAM_URL is not set');

/** As a catalogue tool's defaults (domain/catalogue.ts): 30 s, 10 MiB, no configured headers. */
const TARGET: UpstreamTarget = {
  url: upstreamUrl,
  timeoutMs: 30_000,
  maxResponseBytes: 10 * 1024 * 1024,
  headers: {},
};

const upstreams = new Upstreams();
const app = Fastify({ logger: false });
let calls = 0;

app.post<{ Params: { name: string } }>('/api/v1/tools/:name', async (request, reply) => {
  const n = ++calls;
  const result = await upstreams.forward(TARGET, {
    body: JSON.stringify(request.body ?? {}),
    // The same headers toolgate sends, with values of about the same length.
    requestId: `req_${String(n).padStart(26, '0')}`,
    accountId: 'acc_01m7zhzm4xabkjsrnrzvfpkg51',
    keyId: 'key_01m7zhzm4xabkjsrnrzvfpkg51',
    tool: request.params.name,
  });
  if (result.kind !== 'answer') return reply.code(502).send({ status: 'error', result });
  return {
    results: result.results,
    status: result.status,
    metadata: { ...result.metadata, tokens_charged: 0, tokens_remaining: 0 },
  };
});

const address = await app.listen({
  host: process.env.HOST ?? '127.0.0.1',
  port: Number(process.env.PORT ?? 0),
});
process.stdout.write(`proxy baseline listening ${address}\n`);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  Promise.all([app.close(), upstreams.close()]).then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();
