/**
 * createFirstAccount on both backends: an account only into a database that has none, decided in
 * the creating transaction, so that of several processes asking at once exactly one creates it.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import { DEFAULT_PLANS } from '../../src/domain/plans.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { LedgerAppend } from '../../src/store/store.js';
import { accountRecord, scratchDir } from '../helpers.js';
import { POSTGRES_URL, postgresAvailable, scratchPostgresStore, scratchSchemaName } from '../postgres.js';

const available = await postgresAvailable();
const NOW = 1_776_261_329;

describe('the first account', () => {
  it('SQLite: of two connections to one file, the first creates it and the second does not', async () => {
    const { dir, cleanup } = scratchDir();
    const path = join(dir, 'toolgate.db');
    const a = new SqliteStore({ path });
    const b = new SqliteStore({ path });
    try {
      await a.migrate(DEFAULT_PLANS, NOW);
      const one = accountRecord(NOW);
      expect(await a.accounts.createFirst(one, openingGrant(one.id))).toBe(true);
      expect(await b.accounts.createFirst(accountRecord(NOW))).toBe(false);
      expect(await a.accounts.createFirst(accountRecord(NOW))).toBe(false);
      expect((await b.accounts.list({ limit: 10 })).map((x) => [x.id, x.tokenBalance])).toEqual([
        [one.id, 1000],
      ]);
    } finally {
      await a.close();
      await b.close();
      cleanup();
    }
  });

  it.skipIf(!available)('PostgreSQL: of three processes asking at once, exactly one creates it', async () => {
    for (let trial = 0; trial < 3; trial++) {
      const schema = scratchSchemaName();
      const stores = [0, 1, 2].map(() => new PostgresStore({ url: POSTGRES_URL, schema }));
      try {
        await stores[0]!.migrate(DEFAULT_PLANS, NOW);
        const created = await Promise.all(
          stores.map((s) => {
            const account = accountRecord(NOW);
            return s.accounts.createFirst(account, openingGrant(account.id));
          }),
        );
        expect(created.filter(Boolean)).toHaveLength(1);
        expect(await stores[1]!.accounts.count()).toBe(1);
        expect(await stores[2]!.accounts.createFirst(accountRecord(NOW))).toBe(false);
      } finally {
        await scratchPostgresStore(schema).cleanup();
        await Promise.all(stores.map((s) => s.close()));
      }
    }
  });
});

function openingGrant(accountId: string): LedgerAppend {
  return {
    id: newId('led'),
    accountId,
    kind: 'grant',
    amount: 1000,
    reason: 'opening balance',
    idempotencyKey: null,
    requestHash: 'opening',
    createdAt: NOW,
  };
}
