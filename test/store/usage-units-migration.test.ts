/**
 * Migration 014 on a database without it, on both backends: the rollup rows of a tool the
 * catalogue meters in pages, which were added to records until then, move to pages; those of tools
 * counting records (a unit given as records, or none) stay records; and the counts are kept.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_PLANS } from '../../src/domain/plans.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { POSTGRES_URL, postgresAvailable, scratchPostgresStore, scratchSchemaName } from '../postgres.js';

const postgres = await postgresAvailable();
const T = Date.UTC(2026, 3, 15, 13, 55, 29) / 1000;
// Every other migration, the later ones included: a database that has them gets 014 on its own.
const BEFORE = MIGRATIONS.filter((m) => m.version !== 14);

const tool = (name: string, metering: unknown) =>
  `('${name}', '${JSON.stringify({ name, metering })}', 0, 0)`;
const day = (d: string, tool: string, surface: string, calls: number, records: number) =>
  `('acc_a', '${d}', 'key_1', '${tool}', '${surface}', ${calls}, 0, ${records}, ${calls}, 0, 0)`;

const DATA = `
  CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL);
  INSERT INTO schema_migrations (version, name, applied_at) VALUES
    ${BEFORE.map((m) => `(${m.version}, '${m.name}', 0)`).join(', ')};
  INSERT INTO tools (name, definition, created_at, updated_at) VALUES
    ${tool('fetch_pages', { category: 'scrape', unit: 'pages' })},
    ${tool('people', { category: 'enrich', unit: 'records' })},
    ${tool('lookup', { category: 'enrich' })},
    ${tool('ping', null)};
  INSERT INTO usage_daily (account_id, day, key_id, tool, surface, calls, tokens, records, with_data, without_data, failed) VALUES
    ${day('2026-04-14', 'fetch_pages', 'http', 2, 30)},
    ${day('2026-04-14', 'fetch_pages', 'mcp', 1, 5)},
    ${day('2026-04-15', 'fetch_pages', 'http', 1, 0)},
    ${day('2026-04-14', 'people', 'http', 3, 7)},
    ${day('2026-04-14', 'lookup', 'http', 1, 2)},
    ${day('2026-04-14', 'gone_tool', 'http', 1, 4)},
    ${day('2026-04-14', 'ping', 'http', 1, 0)};`;

async function expectMoved(store: Store): Promise<void> {
  expect(await store.migrate(DEFAULT_PLANS, T)).toEqual({ applied: ['014-usage-units'] });
  const byTool = await store.usageHistory.history('acc_a', '2026-04-01', '2026-04-30', 'tool');
  expect(byTool.map((g) => [g.group, g.calls, g.records, g.units])).toEqual([
    ['fetch_pages', 4, 0, { pages: 35 }],
    // A tool no longer in the catalogue: nothing tells its unit, so it stays as it was.
    ['gone_tool', 1, 4, undefined],
    ['lookup', 1, 2, undefined],
    ['people', 3, 7, undefined],
    ['ping', 1, 0, undefined],
  ]);
  const byDay = await store.usageHistory.history('acc_a', '2026-04-14', '2026-04-15', 'day');
  expect(byDay.map((g) => [g.group, g.calls, g.records, g.units])).toEqual([
    ['2026-04-14', 9, 13, { pages: 35 }],
    ['2026-04-15', 1, 0, undefined],
  ]);
  expect(await store.migrate(DEFAULT_PLANS, T)).toEqual({ applied: [] });
}

describe('migration 014: usage by unit', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  it('SQLite: moves the amounts of tools metered in another unit out of records', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-014-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'before.db');
    const db = new Database(path);
    for (const m of BEFORE) if (m.sqlite !== null) db.exec(m.sqlite);
    db.exec(DATA);
    db.close();
    const store = new SqliteStore({ path });
    cleanups.unshift(() => store.close());
    await expectMoved(store);
  });

  it.skipIf(!postgres)(
    'PostgreSQL: moves the amounts of tools metered in another unit out of records',
    async () => {
      const schema = scratchSchemaName();
      const { store, cleanup } = scratchPostgresStore(schema);
      cleanups.push(cleanup);
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      try {
        await client.query(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}`);
        for (const m of BEFORE) if (m.postgres !== null) await client.query(m.postgres);
        await client.query(DATA);
      } finally {
        await client.end();
      }
      await expectMoved(store);
    },
  );
});
