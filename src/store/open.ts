/** @module Opens the store the configuration names. */
import type { DatabaseConfig } from '../config.js';
import { ConfigError } from '../config.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

export async function openStore(database: DatabaseConfig): Promise<Store> {
  if (database.kind === 'sqlite') return new SqliteStore({ path: database.path });
  throw new ConfigError('PostgreSQL (postgres://) is not supported by this build yet; use sqlite:<path>.');
}
