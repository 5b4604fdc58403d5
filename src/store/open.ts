/** @module Opens the store the configuration names (each driver is loaded only when it is used). */
import type { DatabaseConfig } from '../config.js';
import type { PostgresOptions } from './postgres/driver.js';
import type { Store } from './store.js';

/**
 * What the process is, for the store: a server keeps a read cache and logs the store's warnings; a
 * one-shot command (the CLI) does without a cache. SQLite's cache needs neither (see its store).
 */
export type OpenOptions = Pick<PostgresOptions, 'cache' | 'warn'>;

export async function openStore(database: DatabaseConfig, options: OpenOptions = {}): Promise<Store> {
  if (database.kind === 'sqlite') {
    const { SqliteStore } = await import('./sqlite/sqlite-store.js');
    return new SqliteStore({ path: database.path });
  }
  const { PostgresStore } = await import('./postgres/postgres-store.js');
  return new PostgresStore({
    url: database.url,
    poolSize: database.poolSize,
    schema: database.schema,
    statementTimeoutMs: database.timeoutMs,
    // Also bounds the wait for a free pooled connection under load.
    connectTimeoutMs: database.timeoutMs,
    ...options,
  });
}
