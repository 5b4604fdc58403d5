/** @module The slice of better-sqlite3 the SQLite store calls, and how its errors map to availability. */
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
