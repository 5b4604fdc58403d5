/** @module Opens the store the configuration names. */
import type { DatabaseConfig } from '../config.js';
import { PostgresStore } from './postgres/postgres-store.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

export async function openStore(database: DatabaseConfig): Promise<Store> {
  if (database.kind === 'sqlite') return new SqliteStore({ path: database.path });
  return new PostgresStore({ url: database.url, poolSize: database.poolSize });
}
