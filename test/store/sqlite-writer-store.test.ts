/**
 * The Store contract on SQLite as a serving process has it: a read cache told of every write, and
 * consumptions written by the writer thread (src/store/sqlite/writer.ts), decided ahead of the
 * write lock on the event loop.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReadCache } from '../../src/store/read-cache.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { alertsContract } from './alerts-contract.js';
import type { StoreFixture } from './contract-fixtures.js';
import { ledgerContract } from './ledger-contract.js';
import { lifecycleContract } from './lifecycle-contract.js';
import { metersContract } from './meters-contract.js';
import { usageContract } from './usage-contract.js';
import { webhooksContract } from './webhooks-contract.js';

async function scratchServingSqlite(): Promise<StoreFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-store-'));
  const store = new SqliteStore({
    path: join(dir, 'toolgate.db'),
    observer: new ReadCache(),
    writerThread: true,
  });
  return {
    store,
    async cleanup() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const name = 'SQLite with its writer thread';
lifecycleContract(name, scratchServingSqlite);
ledgerContract(name, scratchServingSqlite);
usageContract(name, scratchServingSqlite);
webhooksContract(name, scratchServingSqlite);
alertsContract(name, scratchServingSqlite);
metersContract(name, scratchServingSqlite);
