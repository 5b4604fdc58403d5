/**
 * @module What the MCP front door costs per request, in process (Fastify's inject, no sockets): the
 * same get_account as an HTTP call and as an MCP tools/call in each protocol era, alternated in
 * rounds, on a scratch SQLite store. `node .bench/bench/mcp-cost.js [--calls N] [--rounds R]`.
 * The difference between the MCP and HTTP times is the SDK's share (its per-request server and
 * transport, its message validation, and the web Request/Response it works with) plus toolgate's
 * conversion to and from them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.js';
import { systemClock } from '../src/domain/clock.js';
import { DEFAULT_PLANS } from '../src/domain/plans.js';
import { createServices } from '../src/service/index.js';
import { withReadCache } from '../src/store/cached-reads.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { MCP_GET_ACCOUNT } from './lib/mcp-requests.js';

const { values } = parseArgs({ options: { calls: { type: 'string' }, rounds: { type: 'string' } } });
const CALLS = Number(values.calls ?? 5_000);
const ROUNDS = Number(values.rounds ?? 4);

const dir = mkdtempSync(join(tmpdir(), 'toolgate-mcp-cost-'));
const { store, reads } = withReadCache((observer) => new SqliteStore({ path: join(dir, 't.db'), observer }));
await store.migrate(DEFAULT_PLANS, Math.floor(Date.now() / 1000));
const services = createServices({
  store,
  reads,
  clock: systemClock,
  keyPrefix: 'tg',
  keySecret: 'mcp-cost-key-secret-0123456789abcdef01234',
});
const account = await services.accounts.create({ name: 'bench' });
if (!account.ok) throw new Error(account.error.message);
const key = await services.keys.create(account.value.id);
if (!key.ok) throw new Error(key.error.message);
const app = await buildApp({ services });

const auth = { authorization: `Bearer ${key.value.key}`, 'content-type': 'application/json' };
const SIDES = {
  http: { url: '/api/v1/tools/get_account', headers: auth, payload: '{}' },
  mcp_2025: {
    url: '/mcp',
    headers: { ...auth, ...MCP_GET_ACCOUNT['2025'].headers },
    payload: MCP_GET_ACCOUNT['2025'].body,
  },
  mcp_2026: {
    url: '/mcp',
    headers: { ...auth, ...MCP_GET_ACCOUNT['2026'].headers },
    payload: MCP_GET_ACCOUNT['2026'].body,
  },
} as const;

async function time(side: keyof typeof SIDES): Promise<number> {
  const { url, headers, payload } = SIDES[side];
  const started = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) {
    const res = await app.inject({ method: 'POST', url, headers, payload });
    if (res.statusCode !== 200) throw new Error(`${side}: ${res.statusCode} ${res.body.slice(0, 200)}`);
  }
  return Number(process.hrtime.bigint() - started) / 1_000 / CALLS;
}

const order = Object.keys(SIDES) as (keyof typeof SIDES)[];
const times: Record<string, number[]> = { http: [], mcp_2025: [], mcp_2026: [] };
await time('http');
await time('mcp_2025');
for (let r = 0; r < ROUNDS; r++) {
  // Alternate the order each round: no side always runs on a warmer or a more littered heap.
  for (const side of r % 2 === 0 ? order : [...order].reverse()) times[side]!.push(await time(side));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const http = median(times.http!);
process.stdout.write(
  `get_account in process, ${CALLS} calls x ${ROUNDS} rounds, median microseconds per call:\n`,
);
for (const side of order) {
  const us = median(times[side]!);
  const extra =
    side === 'http' ? '' : `  (+${(us - http).toFixed(1)} over HTTP, ${(http / us).toFixed(2)}x its rate)`;
  process.stdout.write(`  ${side.padEnd(9)} ${us.toFixed(1).padStart(7)}${extra}\n`);
}
await app.close();
await store.close();
rmSync(dir, { recursive: true, force: true });
