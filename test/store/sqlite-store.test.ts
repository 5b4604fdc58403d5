import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { catalogueContract } from './catalogue-contract.js';
import { type StoreFixture, storeContract } from './contract.js';
import { metersContract } from './meters-contract.js';
import { usageHistoryContract } from './usage-history-contract.js';
import { webhooksContract } from './webhooks-contract.js';

/** A store on a new file in a scratch directory, removed with it. */
async function scratchSqlite(): Promise<StoreFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-store-'));
  const store = new SqliteStore({ path: join(dir, 'toolgate.db') });
  return {
    store,
    async cleanup() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

storeContract('SQLite', scratchSqlite);
catalogueContract('SQLite', scratchSqlite);
usageHistoryContract('SQLite', scratchSqlite);
webhooksContract('SQLite', scratchSqlite);
metersContract('SQLite', scratchSqlite);
