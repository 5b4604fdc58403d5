/**
 * A database made before the audit trail (migration 001 only) gets every later migration on the
 * next migrate, keeps its data (its fair-use windows included, which SQLite moves to a row per
 * category, and its ledger, which SQLite rebuilds without the constraint over every entry's key),
 * audits from then on, consumes on the windows it had, and still refuses a reused idempotency key:
 * on both backends.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { incrementsFor, type WindowState } from '../../src/domain/fair-use.js';
import { DEFAULT_PLANS } from '../../src/domain/plans.js';
import { initial } from '../../src/store/migrations/001-initial.js';
import { MIGRATIONS, migrationLabel } from '../../src/store/migrations/index.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { POSTGRES_URL, postgresAvailable, scratchPostgresStore, scratchSchemaName } from '../postgres.js';

const postgres = await postgresAvailable();
const FREE = DEFAULT_PLANS.find((p) => p.id === 'free')!;
const T = Date.UTC(2026, 3, 15, 13, 55, 29) / 1000;
const SCHEMA_MIGRATIONS = `CREATE TABLE schema_migrations (
  version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`;
const ACCOUNT = `INSERT INTO plans (id, unlimited, limits, created_at, updated_at)
    VALUES ('free', false, '${JSON.stringify(FREE.limits)}', 0, 0);
  INSERT INTO accounts (id, name, plan_id, status, unlimited_override, token_balance, created_at, updated_at)
    VALUES ('acc_old', 'Old Co', 'free', 'active', NULL, 7, 0, 0);
  INSERT INTO token_ledger (id, account_id, kind, amount, delta, balance_after, reason, idempotency_key, request_hash, created_at)
    VALUES ('led_01', 'acc_old', 'grant', 10, 10, 10, 'welcome', 'k1', 'h1', 0),
           ('led_02', 'acc_old', 'charge', 3, -3, 7, NULL, NULL, 'h2', 0);
  INSERT INTO schema_migrations (version, name, applied_at) VALUES (1, 'initial', 0);
  INSERT INTO fair_use_windows (account_id, category, unit, win, started_at, ends_at, used) VALUES
    ('acc_old', 'enrich', 'records', '5h', ${T - 600}, ${T - 600 + 18_000}, 40),
    ('acc_old', 'enrich', 'records', '1w', ${T - 86_400}, ${T - 86_400 + 604_800}, 90),
    ('acc_old', 'enrich', 'requests', '5h', ${T - 20_000}, ${T - 2_000}, 7),
    ('acc_old', 'search', 'requests', '5h', ${T - 60}, ${T - 60 + 18_000}, 3);`;

/** The windows inserted above, as the store reads them (in key order). */
const WINDOWS = [
  {
    category: 'enrich',
    unit: 'records',
    window: '1w',
    startedAt: T - 86_400,
    endsAt: T - 86_400 + 604_800,
    used: 90,
  },
  {
    category: 'enrich',
    unit: 'records',
    window: '5h',
    startedAt: T - 600,
    endsAt: T - 600 + 18_000,
    used: 40,
  },
  { category: 'enrich', unit: 'requests', window: '5h', startedAt: T - 20_000, endsAt: T - 2_000, used: 7 },
  { category: 'search', unit: 'requests', window: '5h', startedAt: T - 60, endsAt: T - 60 + 18_000, used: 3 },
];

/** The account's windows in key order (PostgreSQL's snapshot gives them in no particular order). */
async function windowsOf(store: Store) {
  const key = (w: WindowState) => `${w.category}.${w.unit}.${w.window}`;
  return [...((await store.accounts.snapshot('acc_old'))?.windows ?? [])].sort((a, b) =>
    key(a) < key(b) ? -1 : 1,
  );
}

async function expectUpgraded(store: Store): Promise<void> {
  expect(await store.migrate(DEFAULT_PLANS, T)).toEqual({
    // Every migration after the first, in order.
    applied: MIGRATIONS.slice(1).map(migrationLabel),
  });
  expect(await store.accounts.get('acc_old')).toMatchObject({ name: 'Old Co', tokenBalance: 7 });
  // In the spec's order again, whatever order the old column kept (PostgreSQL's JSONB: 1w before 5h).
  expect(JSON.stringify((await store.plans.get('free'))?.limits)).toBe(JSON.stringify(FREE.limits));
  expect(await windowsOf(store)).toEqual(WINDOWS);
  // The running windows go on from where they were; the one that ended starts again.
  const outcome = await store.usage.commit({
    accountId: 'acc_old',
    increments: incrementsFor(FREE.limits, 'enrich', { records: 5, requests: 1 }),
    now: T,
    render: (windows) => windows,
  });
  expect(outcome).toMatchObject({ kind: 'committed' });
  expect(await windowsOf(store)).toEqual([
    { ...WINDOWS[0], used: 95 },
    { ...WINDOWS[1], used: 45 },
    { category: 'enrich', unit: 'requests', window: '5h', startedAt: T, endsAt: T + 18_000, used: 1 },
    WINDOWS[3],
  ]);
  // The ledger as it was (migration 008 rebuilt it on SQLite), its idempotency key still unique.
  const ledger = await store.ledger.list('acc_old', { limit: 10 });
  expect(ledger.map((e) => [e.id, e.delta, e.balanceAfter, e.idempotencyKey])).toEqual([
    ['led_01', 10, 10, 'k1'],
    ['led_02', -3, 7, null],
  ]);
  const append = (id: string, idempotencyKey: string | null, requestHash: string) =>
    store.ledger.append({
      id,
      accountId: 'acc_old',
      kind: 'charge',
      amount: 1,
      reason: null,
      idempotencyKey,
      requestHash,
      createdAt: T,
    });
  expect(await append('led_03', 'k1', 'h1')).toMatchObject({ kind: 'replayed', entry: { id: 'led_01' } });
  expect(await append('led_03', 'k1', 'other')).toEqual({ kind: 'idempotency_conflict' });
  expect(await append('led_03', null, 'h3')).toMatchObject({ kind: 'applied', entry: { balanceAfter: 6 } });
  expect(await append('led_04', null, 'h4')).toMatchObject({ kind: 'applied', entry: { balanceAfter: 5 } });
  expect(await store.accounts.get('acc_old')).toMatchObject({ tokenBalance: 5 });
  await store.ledger.append({
    id: 'led_05',
    accountId: 'acc_old',
    kind: 'grant',
    amount: 2,
    reason: null,
    idempotencyKey: null,
    requestHash: 'h5',
    createdAt: T,
  });
  expect(await store.audit.list({ limit: 10 })).toEqual([]);
  const entry = {
    id: 'aud_0000000000000000000000000a',
    at: T,
    actor: 'cli:ops',
    action: 'account.update' as const,
    accountId: 'acc_old',
    targetId: null,
    details: { name: 'New Co' },
  };
  await store.accounts.update('acc_old', { name: 'New Co' }, T, entry);
  expect(await store.audit.list({ accountId: 'acc_old', limit: 10 })).toEqual([entry]);
  expect(await store.migrate(DEFAULT_PLANS, T)).toEqual({ applied: [] });
}

describe('upgrading a database made before the audit trail', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  it('SQLite: migrate applies every later migration and keeps the data', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-upgrade-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'old.db');
    const db = new Database(path);
    db.exec(SCHEMA_MIGRATIONS);
    db.exec(initial.sqlite as string);
    db.exec(ACCOUNT.replace('false', '0'));
    db.close();
    const store = new SqliteStore({ path });
    cleanups.unshift(() => store.close());
    await expectUpgraded(store);
    // The partial index still refuses a second entry with an account's key.
    const check = new Database(path);
    try {
      const indexes = check
        .prepare(
          "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'token_ledger' ORDER BY name",
        )
        .pluck()
        .all();
      // The key's index covers only the entries that have one; no constraint over every entry is
      // left, and the table is its (account_id, id) key (migration 019): no other index.
      expect(indexes).toEqual(['token_ledger_idempotency']);
      expect(() =>
        check
          .prepare(
            `INSERT INTO token_ledger (id, account_id, kind, amount, delta, balance_after, reason, idempotency_key, request_hash, created_at)
             VALUES ('led_09', 'acc_old', 'grant', 1, 1, 8, NULL, 'k1', 'h9', 0)`,
          )
          .run(),
      ).toThrow(/UNIQUE constraint failed/);
    } finally {
      check.close();
    }
  });

  it.skipIf(!postgres)('PostgreSQL: migrate applies every later migration and keeps the data', async () => {
    const schema = scratchSchemaName();
    const { store, cleanup } = scratchPostgresStore(schema);
    cleanups.push(cleanup);
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      await client.query(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}`);
      await client.query(SCHEMA_MIGRATIONS);
      await client.query(initial.postgres as string);
      await client.query(ACCOUNT);
      await expectUpgraded(store);
      // The partial index still refuses a second entry with an account's key.
      await expect(
        client.query(
          `INSERT INTO token_ledger (id, account_id, kind, amount, delta, balance_after, reason, idempotency_key, request_hash, created_at)
           VALUES ('led_09', 'acc_old', 'grant', 1, 1, 8, NULL, 'k1', 'h9', 0)`,
        ),
      ).rejects.toThrow(/token_ledger_idempotency/);
    } finally {
      await client.end();
    }
  });
});
