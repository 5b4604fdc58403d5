/** @module Opens the store the configuration names (each driver is loaded only when it is used). */
import type { DatabaseConfig } from '../config.js';
import { CachedReads } from './cached-reads.js';
import type { ChangeObserver } from './changes.js';
import { ReadCache } from './read-cache.js';
import type { Store, Warn } from './store.js';

export interface OpenOptions {
  /** Told what every write changed (a server's read cache); none for a one-shot command (the CLI). */
  observer?: ChangeObserver;
  /** Where the store's warnings go. */
  warn?: Warn;
  /** SQLite: checkpoints on a thread of their own (a serving process; sqlite/checkpointer.ts). */
  backgroundCheckpoints?: boolean;
  /** SQLite: consumptions written by a thread of their own (a serving process; sqlite/writer.ts). */
  writerThread?: boolean;
}

export async function openStore(database: DatabaseConfig, options: OpenOptions = {}): Promise<Store> {
  if (database.kind === 'sqlite') {
    const { SqliteStore } = await import('./sqlite/sqlite-store.js');
    return new SqliteStore({
      path: database.path,
      ...(options.observer ? { observer: options.observer } : {}),
      ...(options.backgroundCheckpoints ? { backgroundCheckpoints: true } : {}),
      ...(options.writerThread && database.writer === 'thread' ? { writerThread: true } : {}),
      ...(options.warn ? { warn: options.warn } : {}),
    });
  }
  const { PostgresStore } = await import('./postgres/postgres-store.js');
  return new PostgresStore({
    url: database.url,
    poolSize: database.poolSize,
    schema: database.schema,
    statementTimeoutMs: database.timeoutMs,
    // Also bounds the wait for a free pooled connection under load.
    connectTimeoutMs: database.timeoutMs,
    ...(options.observer ? { observer: options.observer } : {}),
    ...(options.warn ? { warn: options.warn } : {}),
  });
}

/** A serving process's store: the read cache in front, kept true by its writes and every other process's. */
export async function openCachedStore(
  database: DatabaseConfig,
  options: Omit<OpenOptions, 'observer'> = {},
): Promise<{ store: Store; reads: CachedReads }> {
  const cache = new ReadCache();
  const store = await openStore(database, {
    backgroundCheckpoints: true,
    writerThread: true,
    ...options,
    observer: cache,
  });
  return { store, reads: new CachedReads(store, cache) };
}
