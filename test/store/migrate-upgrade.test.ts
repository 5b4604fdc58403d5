/**
 * A database made before the audit trail (migration 001 only) gets migration 002 on the next
 * migrate, keeps its data, and audits from then on: on both backends.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_PLANS } from '../../src/domain/plans.js';
import { initial } from '../../src/store/migrations/001-initial.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { POSTGRES_URL, postgresAvailable, scratchPostgresStore, scratchSchemaName } from '../postgres.js';

const postgres = await postgresAvailable();
const T = Date.UTC(2026, 3, 15, 13, 55, 29) / 1000;
const SCHEMA_MIGRATIONS = `CREATE TABLE schema_migrations (
  version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`;
const ACCOUNT = `INSERT INTO plans (id, unlimited, limits, created_at, updated_at)
    VALUES ('free', false, '{}', 0, 0);
  INSERT INTO accounts (id, name, plan_id, status, unlimited_override, token_balance, created_at, updated_at)
    VALUES ('acc_old', 'Old Co', 'free', 'active', NULL, 7, 0, 0);
  INSERT INTO schema_migrations (version, name, applied_at) VALUES (1, 'initial', 0);`;

async function expectUpgraded(store: Store): Promise<void> {
  expect(await store.migrate(DEFAULT_PLANS, T)).toEqual({ applied: ['002-audit'] });
  expect(await store.getAccount('acc_old')).toMatchObject({ name: 'Old Co', tokenBalance: 7 });
  expect(await store.listAudit({ limit: 10 })).toEqual([]);
  const entry = {
    id: 'aud_0000000000000000000000000a',
    at: T,
    actor: 'cli:ops',
    action: 'account.update' as const,
    accountId: 'acc_old',
    targetId: null,
    details: { name: 'New Co' },
  };
  await store.updateAccount('acc_old', { name: 'New Co' }, T, entry);
  expect(await store.listAudit({ accountId: 'acc_old', limit: 10 })).toEqual([entry]);
  expect(await store.migrate(DEFAULT_PLANS, T)).toEqual({ applied: [] });
}

describe('upgrading a database made before the audit trail', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  it('SQLite: migrate applies 002-audit and keeps the data', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-upgrade-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'old.db');
    const db = new Database(path);
    db.exec(SCHEMA_MIGRATIONS);
    db.exec(initial.sqlite);
    db.exec(ACCOUNT.replace('false', '0'));
    db.close();
    const store = new SqliteStore({ path });
    cleanups.unshift(() => store.close());
    await expectUpgraded(store);
  });

  it.skipIf(!postgres)('PostgreSQL: migrate applies 002-audit and keeps the data', async () => {
    const schema = scratchSchemaName();
    const { store, cleanup } = scratchPostgresStore(schema);
    cleanups.push(cleanup);
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      await client.query(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}`);
      await client.query(SCHEMA_MIGRATIONS);
      await client.query(initial.postgres);
      await client.query(ACCOUNT);
    } finally {
      await client.end();
    }
    await expectUpgraded(store);
  });
});
