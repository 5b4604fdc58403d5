/**
 * @module The slice of `pg` the PostgreSQL store calls, the pool it builds (bounded timeouts,
 * BIGINT as numbers), and how driver errors map to availability.
 */
import type { Socket } from 'node:net';
import pg from 'pg';
import { StoreUnavailableError } from '../../domain/errors.js';
import type { ChangeObserver } from '../changes.js';
import type { Warn } from '../store.js';

export interface PgQueryable {
  query<R = Record<string, unknown>>(
    text: string,
    values?: unknown[],
  ): Promise<{ rows: R[]; rowCount: number | null }>;
  /** A named statement: prepared once per connection. */
  query<R = Record<string, unknown>>(config: {
    name: string;
    text: string;
    values: unknown[];
  }): Promise<{ rows: R[]; rowCount: number | null }>;
}

export interface PgClient extends PgQueryable {
  /** Back to the pool; destroyed instead if given an error, or if the connection was lost while held. */
  release(err?: Error | boolean): void;
  /** The error that cut the connection while it was held, if one did: it is not to be used again. */
  readonly lost: Error | undefined;
  /**
   * Runs `send`, which sends queries without waiting for their answers (pipelined): their messages
   * leave in one write to the socket, not one write (and one system call) per message.
   */
  together<T>(send: () => T): T;
}

export interface PgPool extends PgQueryable {
  connect(): Promise<PgClient>;
  end(): Promise<void>;
  on(event: 'error', listener: (err: Error) => void): unknown;
}

export interface PostgresOptions {
  url: string;
  /** Schema to work in (created if missing); `public` by default. Tests use a scratch schema each. */
  schema?: string;
  /** Connections per process. */
  poolSize?: number;
  /** How long to wait for a connection before answering unavailable. */
  connectTimeoutMs?: number;
  /** Longest a statement may run before it is cancelled and answered as unavailable. */
  statementTimeoutMs?: number;
  /**
   * Told what every write changed, this process's and the others' (through LISTEN/NOTIFY): a server
   * with a read cache. Without one the process still notifies its writes, and the others do not
   * wait for it (the CLI).
   */
  observer?: ChangeObserver;
  /** Told when a write was answered without every server's acknowledgement (see ChangeFeed). */
  warn?: Warn;
}

// BIGINT (int8) and count(*) arrive as strings by default; every value we store fits a double exactly.
const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === 20
      ? (v: string) => Number(v)
      : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

export function createPool(o: PostgresOptions): PgPool {
  const schema = o.schema ?? 'public';
  const pool = new pg.Pool({
    connectionString: o.url,
    max: o.poolSize ?? 10,
    connectionTimeoutMillis: o.connectTimeoutMs ?? 2_000,
    idleTimeoutMillis: 30_000,
    // Bounded on the server (statement_timeout) and on the client (query_timeout), so a stalled
    // database turns into 503s in bounded time instead of hanging requests.
    statement_timeout: o.statementTimeoutMs ?? 5_000,
    query_timeout: (o.statementTimeoutMs ?? 5_000) + 1_000,
    idle_in_transaction_session_timeout: 10_000,
    options: `-c search_path=${quoteIdent(schema)}`,
    types,
    // Queries sent before the one ahead is answered go out at once, each run when the one before
    // it is done: a group commit sends its BEGIN, locks and reads in one round trip, its writes and
    // COMMIT in another (consumption.ts). A connection used one query at a time works as without.
    pipeline: true,
    // The URL's own application_name, if it has one, names the connections in pg_stat_activity.
    ...(/[?&]application_name=/.test(o.url) ? {} : { application_name: 'toolgate' }),
  });
  // An idle client losing its connection (server restart, pg_terminate_backend) must not crash the
  // process; the pool drops it and the next checkout connects afresh.
  pool.on('error', () => {});
  return {
    query: pool.query.bind(pool) as PgQueryable['query'],
    connect: async () => checkedOut(await pool.connect()),
    end: () => pool.end(),
    on: (event, listener) => pool.on(event, listener),
  };
}

/**
 * A client out of the pool, listened to while it is held: the pool stops listening to a client it
 * hands out, and a connection cut meanwhile (a reset, `pg_terminate_backend`, a failover) emits
 * 'error' on it, between two queries as well as during one (then twice: the reset, and "Connection
 * terminated unexpectedly" when the socket ends). Unheard, that event ends the process. Heard, it
 * marks the client lost, and its release destroys it instead of handing it to anyone else.
 */
function checkedOut(client: pg.PoolClient): PgClient {
  let lost: Error | undefined;
  const onError = (err: Error) => {
    lost ??= err;
  };
  client.on('error', onError);
  // Not in pg's types: the socket its protocol messages are written to.
  const socket = (client as unknown as { connection?: { stream?: Partial<Socket> } }).connection?.stream;
  return {
    query: client.query.bind(client) as PgQueryable['query'],
    get lost() {
      return lost;
    },
    together(send) {
      if (!socket?.cork || !socket.uncork) return send();
      socket.cork();
      try {
        return send();
      } finally {
        socket.uncork();
      }
    },
    release(err) {
      client.removeListener('error', onError);
      client.release(err || lost || false);
    },
  };
}

/**
 * A string as an SQL literal, for the statements sent without parameters (a group commit's): the
 * same text as pg's `escapeLiteral` (quotes doubled; with a backslash, an E'' string with it
 * doubled too, right whatever `standard_conforming_strings` is), made by native replaces instead of
 * one character at a time: a batch quotes every account's windows, tens of kilobytes.
 */
export function quoteLiteral(value: string): string {
  const quoted = `'${value.replaceAll("'", "''")}'`;
  return value.includes('\\') ? ` E${quoted.replaceAll('\\', '\\\\')}` : quoted;
}

export function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`Invalid schema name "${name}".`);
  return `"${name}"`;
}

// SQLSTATE classes and codes that mean "the database cannot serve now".
const UNAVAILABLE_SQLSTATE = /^(08|53|57P|58)/;
const UNAVAILABLE_NODE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'EAI_AGAIN',
]);

export function isUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_NODE.has(code)))
    return true;
  // statement_timeout cancels with 57014 (query_canceled): the database is too slow to serve.
  // 25006 (read_only_sql_transaction): a standby after a failover, or a database set read-only,
  // answers but refuses every write until it is a primary again.
  if (code === '57014' || code === '25006') return true;
  return /timeout|Connection terminated|connection.*(closed|ended)|Client has encountered a connection error|Cannot use a pool after calling end/i.test(
    err.message,
  );
}

/** Runs `fn`, turning database-unavailable errors into StoreUnavailableError. */
export async function guard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isUnavailable(err)) {
      const code = (err as { code?: string }).code;
      throw new StoreUnavailableError(`PostgreSQL unavailable (${code ?? (err as Error).message})`, {
        cause: err,
      });
    }
    throw err;
  }
}
