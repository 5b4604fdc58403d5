/**
 * @module The slice of better-sqlite3 the SQLite store calls, how its errors map to availability,
 * and the database files' mode.
 */
import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { StoreUnavailableError } from '../../domain/errors.js';

export interface SqliteStatement {
  /** Rows as their first column's value. */
  pluck(): SqliteStatement;
  /** Rows as arrays of column values, in the order the statement names them. */
  raw(): SqliteStatement;
  run(...params: unknown[]): { changes: number };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}

export interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
  exec(sql: string): unknown;
  pragma(sql: string, options?: { simple?: boolean }): unknown;
  transaction<A extends unknown[], R>(
    fn: (...args: A) => R,
  ): { immediate(...args: A): R } & ((...args: A) => R);
  close(): unknown;
  readonly open: boolean;
  readonly inTransaction: boolean;
}

// Codes that mean "the database cannot serve now" rather than "this request is wrong".
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY|PROTOCOL|NOTADB|CORRUPT)/;

/** Runs `fn`, turning database-unavailable errors into StoreUnavailableError. */
export function guard<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && UNAVAILABLE.test(code)) {
      throw new StoreUnavailableError(`SQLite unavailable (${code})`, { cause: err });
    }
    if (err instanceof TypeError && /database connection is not open/.test(err.message)) {
      throw new StoreUnavailableError('SQLite database is closed', { cause: err });
    }
    throw err;
  }
}

/**
 * Makes the database private to this user before SQLite opens it: a missing file is created 0600
 * (SQLite would create it 0644, less the umask), and SQLite then gives the -wal and -shm it
 * creates the database file's own mode whatever the umask; an existing database, -wal or -shm
 * that others may read (an earlier version's) loses their access. The database holds key digests
 * and webhook secrets. What cannot be done here (a file of another user, a read-only directory)
 * is left for SQLite to report as it opens.
 */
export function makePrivate(path: string): void {
  if (path === ':memory:' || path === '') return;
  try {
    mkdirSync(dirname(path), { recursive: true });
    closeSync(openSync(path, 'wx', 0o600));
    chmodSync(path, 0o600);
  } catch {
    // It exists (or cannot be made): its mode is seen to below, or SQLite says why it cannot open.
  }
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      const mode = statSync(file).mode & 0o777;
      if (mode & 0o077) chmodSync(file, mode & 0o700);
    } catch {
      // Absent, or not ours to change.
    }
  }
}
