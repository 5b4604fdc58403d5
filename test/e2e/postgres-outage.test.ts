import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool } from '../calls.js';
import { POSTGRES_URL, postgresAvailable, scratchPostgresStore, scratchSchemaName } from '../postgres.js';
import { adminCall, E2E_ADMIN_TOKEN } from './admin-client.js';
import { type ServerProcess, startServer } from './process.js';
import { proxyInFront, type TcpProxy } from './tcp-proxy.js';

const available = await postgresAvailable();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!available)('PostgreSQL unreachable', () => {
  const schema = scratchSchemaName();
  const appName = `tg_outage_${schema.slice(-8)}`;
  let proxy: TcpProxy;
  let server: ServerProcess;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
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
    accountId = (await adminCall(server.url, 'POST', '/accounts', { name: 'outage' })).body.id;
    key = (await adminCall(server.url, 'POST', `/accounts/${accountId}/keys`, {})).body.key;
  });
  afterAll(async () => {
    await server?.stop();
    await proxy?.stop();
    await scratchPostgresStore(schema).cleanup();
  });

  // A request that hangs instead of answering fails here: the bound is a few times the 1 s timeout.
  const getAccount = () =>
    callTool(server.url, key, 'get_account', undefined, { signal: AbortSignal.timeout(10_000) });
  const untilOk = async () => {
    const seen: number[] = [];
    for (let i = 0; i < 50; i++) {
      const res = await getAccount();
      seen.push(res.status);
      if (res.status === 200) return seen;
      await sleep(100);
    }
    return seen;
  };

  it('answers 503 unavailable in bounded time while the network to the database is cut, and recovers by itself', async () => {
    expect((await getAccount()).status).toBe(200);
    proxy.stall();
    // Answers from the read cache may go on for the moment it takes to notice the change feed is
    // cut (its heartbeat); then the database is asked, and it does not answer: 503.
    let down = await getAccount();
    for (let i = 0; i < 100 && down.status === 200; i++) {
      await sleep(100);
      down = await getAccount();
    }
    expect(down.status).toBe(503);
    expect(await down.json()).toMatchObject({ status: 'error', code: 'unavailable' });
    const health = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(10_000) });
    expect(health.status).toBe(503);
    const write = await adminCall(server.url, 'POST', `/accounts/${accountId}/usage`, { category: 'enrich' });
    expect(write.status).toBe(503);

    proxy.restore();
    const seen = await untilOk();
    expect(seen.at(-1)).toBe(200);
    expect(seen.every((s) => s === 200 || s === 503)).toBe(true);
    // Nothing of the refused write was kept.
    const view = await adminCall(server.url, 'GET', `/accounts/${accountId}`);
    expect(view.body.fair_use.enrich.requests['5h'].used).toBe(0);
  });

  it('recovers by itself when its database connections are terminated', async () => {
    expect((await getAccount()).status).toBe(200);
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    const { rows } = await admin.query(
      'SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity WHERE application_name = $1',
      [appName],
    );
    await admin.end();
    expect(rows.length).toBeGreaterThan(0);
    const seen = await untilOk();
    expect(seen.at(-1)).toBe(200);
    expect(seen.every((s) => s === 200 || s === 503)).toBe(true);
    expect(
      (await adminCall(server.url, 'POST', `/accounts/${accountId}/usage`, { category: 'enrich' })).status,
    ).toBe(200);
  });
});
