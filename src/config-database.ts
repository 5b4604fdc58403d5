/** @module The database a configuration names: its URL parsed, SQLite's writer chosen, and URLs made safe to print. */
import { resolve } from 'node:path';

export type DatabaseConfig =
  /** `writer`: where a serving process writes its consumptions (sqlite/writer.ts); a one-shot command, on the loop. */
  | { kind: 'sqlite'; path: string; writer?: 'thread' | 'loop' }
  | { kind: 'postgres'; url: string; poolSize: number; schema: string; timeoutMs: number };

/**
 * SQLite's consumptions are written on the event loop unless a thread of their own is asked for:
 * alternated on a quiet machine, charged calls ran at 0.67x the bare forwarder on the loop against
 * 0.55x through the thread (its hand-over costs more CPU than the writes it moves); the thread
 * gained only while other work held the second core (0.67x through it against 0.55x on the loop).
 */
export function withSqliteWriter(
  database: DatabaseConfig,
  writer: 'thread' | 'loop' | undefined,
): DatabaseConfig {
  if (database.kind !== 'sqlite') return database;
  return { ...database, writer: writer ?? 'loop' };
}

export function parseDatabaseUrl(
  url: string,
  pg = { poolSize: 10, schema: 'public', timeoutMs: 5000 },
): DatabaseConfig {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    return { kind: 'sqlite', path: path === ':memory:' ? path : resolve(path) };
  }
  return { kind: 'postgres', url, ...pg };
}

/** A URL with its password, if any, replaced by `***` (for logs and error messages). */
export function redactUrl(value: string): string {
  return value.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}
