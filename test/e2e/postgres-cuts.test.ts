/**
 * A server process on PostgreSQL whose connections are cut under write load, again and again: a
 * TCP proxy between them killed (every connection reset, new ones refused) and the server's own
 * backends terminated (`pg_terminate_backend`). The load is consumptions (admin usage, each with an
 * idempotency key) and metered catalogue tool calls to a real upstream. The process stays up,
 * answers 503 `unavailable` while the database is away, serves again within 5 s of its return,
 * and every consumption it answered 200 is in the database afterwards.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSTGRES_URL, postgresAvailable, scratchPostgresStore, scratchSchemaName } from '../postgres.js';
import { sendJson, startTestUpstream, type TestUpstream } from '../upstream/test-upstream.js';
import { adminCall, E2E_ADMIN_TOKEN, planWithLimit } from './admin-client.js';
import { type ServerProcess, startServer } from './process.js';
import { proxyInFront, type TcpProxy } from './tcp-proxy.js';
import { WriteLoad } from './write-load.js';

const available = await postgresAvailable();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CUTS = 10;
/** The promise: served again within this long of the database's return. */
const BACK_WITHIN_MS = 5_000;

describe.skipIf(!available)('PostgreSQL connections cut under write load', () => {
  const schema = scratchSchemaName();
  const appName = `tg_cuts_${schema.slice(-8)}`;
  let proxy: TcpProxy;
  let upstream: TestUpstream;
  let server: ServerProcess;
  let load: WriteLoad;
  let accountId: string;

  beforeAll(async () => {
    upstream = await startTestUpstream();
    upstream.on('ping', (_call, res) => sendJson(res, 200, { results: { pong: true } }));
    const front = await proxyInFront(POSTGRES_URL);
    proxy = front.proxy;
    const viaProxy = front.url;
    viaProxy.searchParams.set('application_name', appName);
    server = await startServer({
      TOOLGATE_DATABASE_URL: viaProxy.toString(),
      TOOLGATE_DATABASE_SCHEMA: schema,
      TOOLGATE_DATABASE_TIMEOUT_MS: '1000',
      TOOLGATE_KEY_SECRET: 'e2e-key-secret-0123456789abcdef0123456789',
      TOOLGATE_ADMIN_TOKEN: E2E_ADMIN_TOKEN,
      NODE_ENV: 'production',
    });
    expect((await adminCall(server.url, 'PUT', '/plans/bulk', planWithLimit(1_000_000_000))).status).toBe(
      200,
    );
    const account = await adminCall(server.url, 'POST', '/accounts', {
      name: 'cuts',
      plan: 'bulk',
      tokens: 1_000_000,
    });
    accountId = account.body.id;
    const key = (await adminCall(server.url, 'POST', `/accounts/${accountId}/keys`, {})).body.key;
    const tool = {
      upstream: { url: `${upstream.url}/ping` },
      metering: { category: 'enrich', tokens_per_call: 1 },
    };
    expect((await adminCall(server.url, 'PUT', '/tools/ping_tool', tool)).status).toBe(201);
    load = new WriteLoad({ url: server.url, accountId, key, tool: 'ping_tool', workers: 8 });
  });
  afterAll(async () => {
    await load?.stop();
    await server?.stop();
    await proxy?.stop();
    await upstream?.close();
    await scratchPostgresStore(schema).cleanup();
  });

  /** Once the database is back at `since`: how long until a write started after it is answered 200. */
  async function backAfter(since: number): Promise<number> {
    for (;;) {
      const served = load.firstServedSince(since);
      if (served !== undefined) return served - since;
      if (Date.now() - since > BACK_WITHIN_MS * 2) return Number.POSITIVE_INFINITY;
      await sleep(20);
    }
  }

  it(`stays up through ${CUTS} proxy kills: 503 unavailable while cut, served again within 5 s`, {
    timeout: 90_000,
  }, async () => {
    load.start();
    const recoveries: number[] = [];
    let answeredDuringCuts = 0;
    for (let i = 0; i < CUTS; i++) {
      await sleep(400);
      const cutAt = Date.now();
      proxy.cut();
      await sleep(300);
      // The load's workers may all be waiting on writes committed just before the cut (their
      // notification cut off with it): this one is sent now, whatever they do.
      const probe = await adminCall(server.url, 'POST', `/accounts/${accountId}/usage`, {
        category: 'enrich',
      });
      await sleep(Math.max(0, cutAt + 1_000 - Date.now()));
      const restoredAt = Date.now();
      proxy.restore();
      expect(server.child.exitCode, `the server exited at cut ${i + 1}:\n${server.stderr()}`).toBeNull();
      expect(probe).toMatchObject({ status: 503, body: { code: 'unavailable' } });
      // Sent and answered during the cut: the database could not be reached, so 503 each.
      const during = load.between(cutAt + 50, restoredAt);
      expect(during.filter((r) => r.status !== 503 || r.code !== 'unavailable')).toEqual([]);
      answeredDuringCuts += during.length + 1;
      recoveries.push(await backAfter(restoredAt));
    }
    console.log(
      `proxy kills: ${CUTS}; answered 503 during them: ${answeredDuringCuts}; served again after (ms): ${recoveries.join(', ')}`,
    );
    expect(Math.max(...recoveries)).toBeLessThan(BACK_WITHIN_MS);
  });

  it(`stays up through ${CUTS} pg_terminate_backend rounds on its own connections`, {
    timeout: 90_000,
  }, async () => {
    load.start();
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    const recoveries: number[] = [];
    let terminated = 0;
    try {
      for (let i = 0; i < CUTS; i++) {
        await sleep(400);
        const { rows } = await admin.query(
          'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
          [appName],
        );
        const at = Date.now();
        terminated += rows.length;
        recoveries.push(await backAfter(at));
        expect(server.child.exitCode, `the server exited at round ${i + 1}:\n${server.stderr()}`).toBeNull();
      }
    } finally {
      await admin.end();
    }
    console.log(
      `terminate rounds: ${CUTS}, backends terminated: ${terminated}; served again after (ms): ${recoveries.join(', ')}`,
    );
    expect(terminated).toBeGreaterThanOrEqual(CUTS);
    expect(Math.max(...recoveries)).toBeLessThan(BACK_WITHIN_MS);
  });

  it('answered only 200 or 503, and every consumption answered 200 is in the database', async () => {
    await load.stop();
    const all = load.results();
    const odd = all.filter((r) => r.status !== 200 && r.status !== 503);
    expect(odd.slice(0, 5)).toEqual([]);
    const answered = all.filter((r) => r.kind === 'consumption' && r.status === 200).map((r) => r.key);
    const toolCalls = all.filter((r) => r.kind === 'tool' && r.status === 200).length;
    const db = new pg.Client({ connectionString: POSTGRES_URL });
    await db.connect();
    try {
      const kept = new Set(
        (
          await db.query(`SELECT idempotency_key FROM ${schema}.usage_idempotency WHERE account_id = $1`, [
            accountId,
          ])
        ).rows.map((r) => r.idempotency_key as string),
      );
      const charges = Number(
        (
          await db.query(
            `SELECT count(*) AS n FROM ${schema}.token_ledger WHERE account_id = $1 AND kind = 'charge'`,
            [accountId],
          )
        ).rows[0].n,
      );
      console.log(
        `requests: ${all.length}; consumptions answered 200: ${answered.length}, kept: ${answered.filter((k) => kept.has(k)).length}; tool calls answered 200: ${toolCalls}, charges kept: ${charges}; 503s: ${all.filter((r) => r.status === 503).length}`,
      );
      expect(answered.length).toBeGreaterThan(100);
      expect(answered.filter((k) => !kept.has(k))).toEqual([]);
      expect(charges).toBeGreaterThanOrEqual(toolCalls);
    } finally {
      await db.end();
    }
  });
});
