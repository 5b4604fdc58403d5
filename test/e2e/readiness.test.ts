/**
 * `/readyz` on both backends, against a server process: 503 while the store refuses writes and 200
 * again once it takes them, while `/healthz` stays liveness. SQLite on a real full disk (a small
 * tmpfs the test mounts, as root, and fills with a file of its own); PostgreSQL through a TCP
 * proxy that is cut, and on a role made read-only (what a server sees when its database fails
 * over to a standby): the database answers, writes are refused.
 */

import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSTGRES_URL, postgresAvailable, scratchSchemaName } from '../postgres.js';
import { adminCall, E2E_ADMIN_TOKEN, planWithLimit } from './admin-client.js';
import { type ServerProcess, startServer } from './process.js';
import { proxyInFront, type TcpProxy } from './tcp-proxy.js';

const available = await postgresAvailable();
const isRoot = process.getuid?.() === 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const BASE_ENV = {
  TOOLGATE_KEY_SECRET: 'e2e-key-secret-0123456789abcdef0123456789',
  TOOLGATE_ADMIN_TOKEN: E2E_ADMIN_TOKEN,
  NODE_ENV: 'production',
};

const status = async (url: string) =>
  (await fetch(url, { signal: AbortSignal.timeout(10_000) }).catch(() => ({ status: 0 }))).status;

/** Polls `path` until it answers `want`; how long that took, or Infinity past `withinMs`. */
async function answersWithin(server: ServerProcess, path: string, want: number, withinMs: number) {
  const started = Date.now();
  for (;;) {
    if ((await status(`${server.url}${path}`)) === want) return Date.now() - started;
    if (Date.now() - started > withinMs) return Number.POSITIVE_INFINITY;
    await sleep(100);
  }
}

/** An account on a plan that never runs out, for consumptions that only the store can refuse. */
async function bulkAccount(server: ServerProcess): Promise<string> {
  expect((await adminCall(server.url, 'PUT', '/plans/bulk', planWithLimit(1_000_000_000))).status).toBe(200);
  return (await adminCall(server.url, 'POST', '/accounts', { name: 'ready', plan: 'bulk' })).body.id;
}

const consume = (server: ServerProcess, accountId: string, key?: string) =>
  adminCall(server.url, 'POST', `/accounts/${accountId}/usage`, {
    category: 'enrich',
    ...(key ? { idempotency_key: key } : {}),
  });

describe.skipIf(!isRoot)('SQLite on a full disk', () => {
  let mountPoint: string;
  let server: ServerProcess;
  let accountId: string;
  const filler = () => join(mountPoint, 'filler');

  beforeAll(async () => {
    mountPoint = mkdtempSync(join(tmpdir(), 'toolgate-full-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mountPoint]);
    server = await startServer({
      ...BASE_ENV,
      TOOLGATE_DATABASE_URL: `sqlite:${join(mountPoint, 'toolgate.db')}`,
    });
    accountId = await bulkAccount(server);
  });
  afterAll(async () => {
    await server?.stop();
    if (mountPoint) {
      execFileSync('umount', [mountPoint]);
      rmSync(mountPoint, { recursive: true, force: true });
    }
  });

  it('answers /readyz 503 while writes fail for want of space, /healthz 200, and ready again once there is room', async () => {
    expect(await status(`${server.url}/readyz`)).toBe(200);
    // The rest of the file system taken by a file of the test's own, to the last byte.
    const fd = openSync(filler(), 'w');
    const chunk = Buffer.alloc(64 * 1024);
    try {
      for (let size = chunk.length; size >= 1; size = Math.floor(size / 2))
        for (;;) {
          try {
            writeSync(fd, chunk, 0, size);
          } catch {
            break;
          }
        }
    } finally {
      closeSync(fd);
    }
    // Consumptions with idempotency keys add rows: the database and its WAL must grow.
    let writes = 0;
    const fillUntilRefused = async () => {
      for (let tried = 0; tried < 5_000; tried++) {
        const answer = await consume(server, accountId, `full-${++writes}`);
        if (answer.status !== 200) return answer;
      }
      return undefined;
    };
    const refused = await fillUntilRefused();
    console.log(`SQLite: the disk filled, the first write refused was number ${writes}: ${refused?.status}`);
    expect(refused).toMatchObject({ status: 503, body: { code: 'unavailable' } });
    expect(await status(`${server.url}/healthz`)).toBe(200);
    // While nothing is freed, /readyz says so: right after a refused write, or after the next one.
    // (A checkpoint may let the WAL start over and take some writes again, and then /readyz rightly
    // says ready; writes that need room are refused again soon after.)
    let unready = 0;
    for (let cycle = 0; cycle < 5 && unready === 0; cycle++) {
      if ((await status(`${server.url}/readyz`)) === 503) unready++;
      else expect(await fillUntilRefused()).toMatchObject({ status: 503, body: { code: 'unavailable' } });
    }
    expect(unready).toBe(1);
    await sleep(500);
    expect(await fillUntilRefused()).toMatchObject({ status: 503, body: { code: 'unavailable' } });

    rmSync(filler());
    expect(await answersWithin(server, '/readyz', 200, 5_000)).toBeLessThan(5_000);
    expect((await consume(server, accountId, 'after-room')).status).toBe(200);
  });
});

describe.skipIf(!available)('PostgreSQL refusing writes', () => {
  const schema = scratchSchemaName();
  const role = `tg_ready_${schema.slice(-8)}`;
  let admin: pg.Client;
  let proxy: TcpProxy;
  let server: ServerProcess;
  let accountId: string;

  const terminateServerConnections = () =>
    admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [role]);

  /** The role's setting changed, then every connection of the server made before it gone (ended, not just told to). */
  async function alterRole(change: string): Promise<void> {
    const since = (await admin.query(`ALTER ROLE ${role} ${change}; SELECT now() AS at`)) as unknown as {
      rows: { at: Date }[];
    }[];
    const at = since[1]!.rows[0]!.at;
    for (let i = 0; i < 100; i++) {
      const { rows } = await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1 AND backend_start < $2`,
        [role, at],
      );
      if (rows.length === 0) return;
      await sleep(50);
    }
    throw new Error('the server kept connections made before the change');
  }

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    const db = new URL(POSTGRES_URL).pathname.slice(1);
    await admin.query(`CREATE ROLE ${role} LOGIN`);
    await admin.query(`GRANT CREATE ON DATABASE "${db}" TO ${role}`);
    const front = await proxyInFront(POSTGRES_URL);
    proxy = front.proxy;
    const url = front.url;
    url.username = role;
    url.password = '';
    server = await startServer({
      ...BASE_ENV,
      TOOLGATE_DATABASE_URL: url.toString(),
      TOOLGATE_DATABASE_SCHEMA: schema,
      TOOLGATE_DATABASE_TIMEOUT_MS: '1000',
    });
    accountId = await bulkAccount(server);
  });
  afterAll(async () => {
    await server?.stop();
    await proxy?.stop();
    if (admin) {
      const db = new URL(POSTGRES_URL).pathname.slice(1);
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
      await terminateServerConnections().catch(() => {});
      await admin.query(`REVOKE ALL ON DATABASE "${db}" FROM ${role}`).catch(() => {});
      await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
      await admin.end();
    }
  });

  it('answers /readyz 503 while the database is cut off, and 200 within 5 s of its return', async () => {
    expect(await status(`${server.url}/readyz`)).toBe(200);
    proxy.cut();
    expect((await consume(server, accountId)).status).toBe(503);
    expect(await status(`${server.url}/readyz`)).toBe(503);
    proxy.restore();
    const back = await answersWithin(server, '/readyz', 200, 5_000);
    console.log(`PostgreSQL: ready again ${back} ms after the database came back`);
    expect(back).toBeLessThan(5_000);
    expect((await consume(server, accountId)).status).toBe(200);
  });

  it('answers /readyz 503 while the database answers but refuses writes (read-only), /healthz 200', async () => {
    expect(await status(`${server.url}/readyz`)).toBe(200);
    await alterRole('SET default_transaction_read_only = on');
    // Each one: not a connection lost to the change, which a retry would get past.
    for (let i = 0; i < 3; i++)
      expect(await consume(server, accountId)).toMatchObject({ status: 503, body: { code: 'unavailable' } });
    expect(await status(`${server.url}/readyz`)).toBe(503);
    expect(await status(`${server.url}/healthz`)).toBe(200);

    await alterRole('RESET default_transaction_read_only');
    expect(await answersWithin(server, '/readyz', 200, 5_000)).toBeLessThan(5_000);
    expect((await consume(server, accountId)).status).toBe(200);
  });
});
