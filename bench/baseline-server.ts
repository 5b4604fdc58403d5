/**
 * @module The baseline: a bare Fastify server in its own process, with one route (`POST /*`) that
 * answers every POST with a constant object shaped like a `get_account` answer. Same Node, same
 * Fastify, same JSON body parsing as toolgate, and nothing else: no auth, no store, no schemas, no
 * logging. Because the route takes any path, the bench sends it byte-for-byte the requests it sends
 * toolgate. Prints `baseline listening <url>` once it listens (PORT, default 0 = any free port); it
 * stops on SIGTERM/SIGINT and when its stdin closes (its parent is gone).
 */
import Fastify from 'fastify';

const BODY = {
  results: {
    id: 'acc_01m7zhzm4xabkjsrnrzvfpkg51',
    name: 'bench-0001',
    status: 'active',
    plan: 'bench',
    token_balance: 0,
    unlimited: false,
    fair_use: {
      enrich: {
        records: {
          '5h': { limit: 1000000000, used: 0, remaining: 1000000000, resets_at: null },
          '1w': { limit: 1000000000, used: 0, remaining: 1000000000, resets_at: null },
        },
        requests: { '5h': { limit: 1000000000, used: 0, remaining: 1000000000, resets_at: null } },
      },
      search: {
        records: {
          '5h': { limit: 1000000000, used: 0, remaining: 1000000000, resets_at: null },
          '1w': { limit: 1000000000, used: 0, remaining: 1000000000, resets_at: null },
        },
        requests: { '5h': { limit: 1000000000, used: 0, remaining: 1000000000, resets_at: null } },
      },
    },
    api_key_count: 1,
    user_count: 0,
    created_at: '2026-11-21T17:20:37Z',
  },
  status: 'ok',
  metadata: {
    fair_use: {
      records_remaining_5h: 1000000000,
      records_reset_5h: '2026-11-21T22:20:38Z',
      records_remaining_1w: 1000000000,
      records_reset_1w: '2026-11-28T17:20:38Z',
    },
  },
};

const app = Fastify({ logger: false });
app.post('/*', async () => BODY);

const address = await app.listen({
  host: process.env.HOST ?? '127.0.0.1',
  port: Number(process.env.PORT ?? 0),
});
process.stdout.write(`baseline listening ${address}\n`);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  app.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();
