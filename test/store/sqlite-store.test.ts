import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { catalogueContract } from './catalogue-contract.js';
import { storeContract } from './contract.js';
import { usageHistoryContract } from './usage-history-contract.js';

storeContract('SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-store-'));
  const store = new SqliteStore({ path: join(dir, 'toolgate.db') });
  return {
    store,
    async cleanup() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

usageHistoryContract('SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-store-'));
  const store = new SqliteStore({ path: join(dir, 'toolgate.db') });
  return {
    store,
    async cleanup() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

catalogueContract('SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-store-'));
  const store = new SqliteStore({ path: join(dir, 'toolgate.db') });
  return {
    store,
    async cleanup() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
