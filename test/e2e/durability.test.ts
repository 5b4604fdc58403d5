import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scratchDir } from '../helpers.js';
import { adminCall, E2E_ADMIN_TOKEN, planWithLimit } from './admin-client.js';
import { startServer } from './process.js';

describe('durability: SIGKILL under consumption load', () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => {
    ({ dir, cleanup } = scratchDir());
  });
  afterEach(() => cleanup());

  it('keeps every consumption answered 200, and nothing that was refused, across a kill and restart', async () => {
    const dbPath = join(dir, 'toolgate.db');
    const env = {
      TOOLGATE_DATABASE_URL: `sqlite:${dbPath}`,
      TOOLGATE_ADMIN_TOKEN: E2E_ADMIN_TOKEN,
      NODE_ENV: 'production',
    };
    const server = await startServer(env);
    await adminCall(server.url, 'PUT', '/plans/small', planWithLimit(150));
    await adminCall(server.url, 'PUT', '/plans/large', planWithLimit(1_000_000));
    // One account fills up and starts refusing; the other keeps granting until the kill.
    const small = (await adminCall(server.url, 'POST', '/accounts', { name: 'small', plan: 'small' })).body
      .id;
    const large = (await adminCall(server.url, 'POST', '/accounts', { name: 'large', plan: 'large' })).body
      .id;

    const answered = new Map<string, { account: string; status: number }>();
    let seq = 0;
    let killed = false;
    const worker = async () => {
      while (!killed) {
        const account = seq % 3 === 0 ? large : small;
        const key = `k-${seq++}`;
        try {
          const res = await adminCall(server.url, 'POST', `/accounts/${account}/usage`, {
            category: 'enrich',
            records: 1,
            idempotency_key: key,
          });
          answered.set(key, { account, status: res.status });
        } catch {
          // In flight when the process died: no answer, so no promise either way.
        }
      }
    };
    const workers = Array.from({ length: 16 }, worker);
    // Kill once the small account has been refusing for a while and the large one is still granting.
    while ([...answered.values()].filter((a) => a.status === 429).length < 100) {
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(await server.stop('SIGKILL')).toBeNull();
    killed = true;
    await Promise.all(workers);

    const granted = [...answered].filter(([, a]) => a.status === 200).map(([k]) => k);
    const refused = [...answered].filter(([, a]) => a.status === 429).map(([k]) => k);
    expect(granted.length).toBeGreaterThan(150);
    expect(refused.length).toBeGreaterThanOrEqual(100);
    expect(granted.length + refused.length).toBe(answered.size);

    // What the database holds after the crash, read directly.
    const db = new Database(dbPath);
    const keys = new Set(
      (
        db.prepare('SELECT idempotency_key FROM usage_idempotency').all() as { idempotency_key: string }[]
      ).map((r) => r.idempotency_key),
    );
    // A row per account and category: [unit, window, startedAt, endsAt, used] of each window (migration 009).
    const used = (account: string) => {
      const row = db
        .prepare("SELECT windows FROM fair_use_state WHERE account_id = ? AND category = 'enrich'")
        .get(account) as { windows: string };
      const windows = JSON.parse(row.windows) as [string, string, number, number, number][];
      return windows.find(([unit, window]) => unit === 'records' && window === '5h')![4];
    };
    const rowsOf = (account: string) =>
      (
        db.prepare('SELECT count(*) AS n FROM usage_idempotency WHERE account_id = ?').get(account) as {
          n: number;
        }
      ).n;
    for (const k of granted) expect(keys.has(k), `answered 200 but lost: ${k}`).toBe(true);
    for (const k of refused) expect(keys.has(k), `refused but recorded: ${k}`).toBe(false);
    // All-or-nothing: the windows count exactly the consumptions recorded, and the small one stopped at its limit.
    expect(used(small)).toBe(rowsOf(small));
    expect(used(small)).toBe(150);
    expect(used(large)).toBe(rowsOf(large));
    const largeUsed = used(large);
    db.close();

    // The server starts again on the same file and serves what was kept.
    const again = await startServer(env);
    const view = await adminCall(again.url, 'GET', `/accounts/${large}`);
    expect(view.body.fair_use.enrich.records['5h'].used).toBe(largeUsed);
    expect(await again.stop()).toBe(0);
  });
});
