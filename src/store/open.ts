/** @module Opens the store the configuration names (each driver is loaded only when it is used). */
import type { DatabaseConfig } from '../config.js';
import type { Store } from './store.js';

export interface OpenOptions {
  /** Keep a read cache (a server); a one-shot command (the CLI) does without. Default true. */
  cache?: boolean;
  /** Where the store's warnings go (a server's log). */
  warn?: (message: string, fields: Record<string, unknown>) => void;
}

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
    cache: options.cache,
    warn: options.warn,
  });
}
