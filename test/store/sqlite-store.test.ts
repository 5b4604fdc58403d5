import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { accountsContract } from './accounts-contract.js';
import { alertsContract } from './alerts-contract.js';
import { auditContract } from './audit-contract.js';
import { catalogueContract } from './catalogue-contract.js';
import type { StoreFixture } from './contract-fixtures.js';
import { keysContract } from './keys-contract.js';
import { ledgerContract } from './ledger-contract.js';
import { lifecycleContract } from './lifecycle-contract.js';
import { metersContract } from './meters-contract.js';
import { plansContract } from './plans-contract.js';
import { usageContract } from './usage-contract.js';
import { usageHistoryContract } from './usage-history-contract.js';
import { usersContract } from './users-contract.js';
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

lifecycleContract('SQLite', scratchSqlite);
plansContract('SQLite', scratchSqlite);
accountsContract('SQLite', scratchSqlite);
keysContract('SQLite', scratchSqlite);
usersContract('SQLite', scratchSqlite);
ledgerContract('SQLite', scratchSqlite);
usageContract('SQLite', scratchSqlite);
auditContract('SQLite', scratchSqlite);
catalogueContract('SQLite', scratchSqlite);
usageHistoryContract('SQLite', scratchSqlite);
webhooksContract('SQLite', scratchSqlite);
alertsContract('SQLite', scratchSqlite);
metersContract('SQLite', scratchSqlite);
