/**
 * Webhooks across real server processes: 300 concurrent consumptions spread over two servers on
 * one PostgreSQL database cross 80% and 100% of a window, and the receiver gets exactly one
 * signed event for each, sent by one of the servers; and a delivery under way when its server is
 * SIGKILLed is delivered after the restart, with the same webhook-id.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { scratchDir } from '../helpers.js';
import { POSTGRES_URL, postgresAvailable } from '../postgres.js';
import { type Receiver, startReceiver } from '../webhooks/receiver.js';
import { accountWithKey, adminCall, E2E_ADMIN_TOKEN, planWithLimit } from './admin-client.js';
import { postgresPair } from './postgres-pair.js';
import { type ServerProcess, startServer } from './process.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const SECRET = 'whsec_ZTJlLXdlYmhvb2stc2lnbmluZy1zZWNyZXQ=';

/** An endpoint for every account's threshold events, written straight into the store the servers share. */
async function addEndpoint(store: Store, url: string): Promise<void> {
  await store.webhooks.addEndpoint(
    {
      id: newId('whe'),
      url,
      accountId: null,
      events: ['fair_use.threshold'],
      thresholds: [80, 100],
      createdAt: Math.floor(Date.now() / 1000),
    },
    SECRET,
  );
}

/** Waits until the receiver has `n` requests (or the deadline), then a little longer for any extra. */
async function settle(receiver: Receiver, n: number): Promise<void> {
  await Promise.race([receiver.waitFor(n), sleep(20_000)]);
  await sleep(2_500);
}

const payloadOf = (r: Receiver['received'][number]) =>
  (r.verified as { ok: true; payload: { type: string; data: Record<string, unknown> } }).payload;

describe.skipIf(!(await postgresAvailable()))('webhooks across two PostgreSQL servers', () => {
  const pair = postgresPair({ TOOLGATE_WEBHOOK_ALLOW_PRIVATE: 'true' });
  let receiver: Receiver;
  let store: PostgresStore;

  beforeAll(async () => {
    receiver = await startReceiver();
    receiver.secret = SECRET;
    store = new PostgresStore({ url: POSTGRES_URL, schema: pair.schema });
    await addEndpoint(store, receiver.url);
  });
  afterAll(async () => {
    await store?.close();
    await receiver?.close();
  });

  it('300 concurrent consumptions over both servers: exactly one event per crossing, each delivered once', async () => {
    const { a, b } = pair;
    expect((await adminCall(a.url, 'PUT', '/plans/three_hundred', planWithLimit(300))).status).toBeLessThan(
      300,
    );
    const { id } = await accountWithKey(a.url, 'three_hundred');
    // Each server reads the endpoints every second.
    await sleep(1_500);
    const answers = await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        adminCall(i % 2 === 0 ? a.url : b.url, 'POST', `/accounts/${id}/usage`, {
          category: 'enrich',
          records: 1,
        }),
      ),
    );
    expect(answers.map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
    await settle(receiver, 4);
    const got = receiver.received.map(payloadOf);
    expect(receiver.received.every((r) => r.verified.ok)).toBe(true);
    // Every window of the consumption (records 5h and 1w, requests 5h) crosses 80 and 100 once.
    const crossings = got.map((p) => `${p.data.unit}.${p.data.window}@${p.data.threshold}`).sort();
    expect(crossings).toEqual([
      'records.1w@100',
      'records.1w@80',
      'records.5h@100',
      'records.5h@80',
      'requests.5h@100',
      'requests.5h@80',
    ]);
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(6);
    for (const p of got) {
      expect(p.data.account_id).toBe(id);
      expect(p.data.used).toBe((p.data.threshold as number) * 3);
    }
  });
});

describe('a delivery cut off by SIGKILL', () => {
  const { dir, cleanup } = scratchDir();
  const env = {
    TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 'toolgate.db')}`,
    TOOLGATE_ADMIN_TOKEN: E2E_ADMIN_TOKEN,
    TOOLGATE_KEY_SECRET: 'e2e-key-secret-0123456789abcdef0123456789',
    TOOLGATE_WEBHOOK_ALLOW_PRIVATE: 'true',
    // A short timeout makes the lease (twice it) run out soon after the kill.
    TOOLGATE_WEBHOOK_TIMEOUT_MS: '1000',
    NODE_ENV: 'production',
  };
  let server: ServerProcess | undefined;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    receiver.secret = SECRET;
  });
  afterAll(async () => {
    await server?.stop();
    await receiver.close();
    cleanup();
  });

  it('is delivered after the restart, with the same webhook-id', async () => {
    server = await startServer(env);
    const store = new SqliteStore({ path: join(dir, 'toolgate.db') });
    await addEndpoint(store, receiver.url);
    await store.close();
    expect((await adminCall(server.url, 'PUT', '/plans/ten', planWithLimit(10))).status).toBeLessThan(300);
    const { id } = await accountWithKey(server.url, 'ten');
    await sleep(1_500);
    receiver.answer = 'hang';
    const r = await adminCall(server.url, 'POST', `/accounts/${id}/usage`, {
      category: 'enrich',
      records: 8,
    });
    expect(r.status).toBe(200);
    // The server is sending (the receiver holds it) when it is killed.
    await Promise.race([receiver.waitFor(1), sleep(10_000)]);
    expect(receiver.received.length).toBeGreaterThanOrEqual(1);
    const first = receiver.received[0]!;
    expect(await server.stop('SIGKILL')).toBeNull();

    receiver.answer = 204;
    const seen = receiver.received.length;
    server = await startServer(env);
    await Promise.race([receiver.waitFor(seen + 1), sleep(15_000)]);
    const again = receiver.received.slice(seen);
    expect(again.map((x) => x.headers['webhook-id'])).toContain(first.headers['webhook-id']);
    expect(again.every((x) => x.verified.ok)).toBe(true);
    expect(payloadOf(again[0]!).data).toMatchObject({ account_id: id, threshold: 80 });
  });
});
