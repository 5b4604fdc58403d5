/**
 * @module The SQLite statement executor: the better-sqlite3 connection and its pragmas, statements
 * prepared once, the retry while another process holds the write lock, the wait for durability
 * (wal-sync.ts), the data_version check that learns of other processes' commits, and the report of
 * what each write changed (changes.ts), made in the same synchronous step as its commit.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { StoreUnavailableError } from '../../domain/errors.js';
import { type Change, type ChangeObserver, report } from '../changes.js';
import type { Warn } from '../store.js';
import { Checkpointer, type CheckpointTuning } from './checkpointer.js';
import { guard, type SqliteDatabase, type SqliteStatement } from './driver.js';
import { COUNT_COMMIT_SQL, OwnCommits } from './own-commits.js';
import { WalSync } from './wal-sync.js';
import { SqliteWriter } from './writer.js';

export interface ExecutorOptions {
  /** File path, or `:memory:`. */
  path: string;
  /**
   * How long a write waits for another process's lock before answering unavailable. The first
   * few milliseconds are SQLite's own (blocking) wait; the rest are asynchronous retries, so one
   * waiting write never stalls the other requests of the process.
   */
  lockWaitMs?: number;
  /** Told what each write changed, in the step of its commit, and every other process's commits as 'all'. */
  observer?: ChangeObserver;
  /**
   * Checkpoints on a thread of their own instead of in the committing connection, on the event
   * loop (checkpointer.ts): for a serving process, not a one-shot command. Tests tune them.
   */
  backgroundCheckpoints?: boolean | CheckpointTuning;
  /** Told what the operator should know (the checkpoint thread failed). */
  warn?: Warn;
  /**
   * Consumptions written by a thread of their own once a batch of them is committed (writer.ts),
   * when there is an observer to decide them from: for a serving process, not a one-shot command.
   */
  writerThread?: boolean;
}

const SYNC_BUSY_MS = 5;
const WRITER_BUSY_MS = 1;
/** SQLite's default automatic checkpoint, in WAL pages. */
const AUTOCHECKPOINT_PAGES = 1000;
/**
 * The serving connection's page cache in KiB, not the driver's 16 MiB: the service reads through
 * its own caches, and what misses here is in the OS's page cache a pread away. Under load the full
 * 16 MiB was 5-10 MiB of the process's peak (MCP on SQLite 154-156 MiB against 142-146). On 1M
 * accounts a metered call then reads about two pages more from the OS's page cache (13% more CPU
 * than on 1k against 7%) at the same req/s.
 */
export const PAGE_CACHE_KIB = 8192;
const ALL: readonly Change[] = ['all'];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class SqliteExecutor {
  readonly db: SqliteDatabase;
  /** The WAL's fdatasyncs; none in memory or without WAL, where the commit itself syncs. */
  readonly walSync: WalSync | undefined;
  readonly observer: ChangeObserver | undefined;
  /** The background checkpoints, when asked for and the file is in WAL mode. */
  readonly checkpointer: Checkpointer | undefined;
  /**
   * Why the last write could not be made, when it was refused as unavailable (disk full, I/O error,
   * the lock held past lockWaitMs); cleared by the next one that commits. Readiness.
   */
  refusal: StoreUnavailableError | undefined;
  /**
   * The writer thread, once started (startWriter): from then on this connection's commits are
   * counted as this process's (own-commits.ts), so that the thread's are not taken for another's.
   */
  writer: SqliteWriter | undefined;
  private readonly statements = new Map<string, SqliteStatement>();
  private readonly lockWaitMs: number;
  private readonly path: string;
  private readonly warn: Warn | undefined;
  private readonly writerWanted: boolean;
  private dataVersion = -1;
  private readonly dataVersionStatement: SqliteStatement;

  constructor(options: ExecutorOptions) {
    if (options.path !== ':memory:') mkdirSync(dirname(options.path), { recursive: true });
    this.path = options.path;
    this.warn = options.warn;
    this.writerWanted = options.writerThread === true && options.observer !== undefined;
    this.lockWaitMs = options.lockWaitMs ?? 5000;
    this.observer = options.observer;
    this.db = guard(() => new Database(options.path) as unknown as SqliteDatabase);
    const journal = this.db.pragma('journal_mode = WAL', { simple: true });
    if (journal === 'wal') {
      // Commits do not wait for the disk; write() does, off the event loop, before it answers.
      this.db.pragma('synchronous = NORMAL');
      this.walSync = new WalSync(`${options.path}-wal`);
    } else {
      // In memory (or a file system without WAL support): the commit itself syncs.
      this.db.pragma('synchronous = FULL');
    }
    this.db.pragma(`busy_timeout = ${SYNC_BUSY_MS}`);
    this.db.pragma('foreign_keys = ON');
    this.db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
    this.dataVersionStatement = this.db.prepare('PRAGMA data_version').pluck();
    if (options.backgroundCheckpoints && this.walSync) {
      const warn = options.warn;
      this.checkpointer = new Checkpointer({
        ...(options.backgroundCheckpoints === true ? {} : options.backgroundCheckpoints),
        path: options.path,
        onStart: () => this.db.pragma('wal_autocheckpoint = 0'),
        onFailure: (err) => {
          // Back to SQLite's own: the WAL must not grow without end.
          if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
          warn?.('SQLite checkpoints are back on the event loop: their thread failed', {
            err: { message: err.message },
          });
        },
        ...(warn ? { warn } : {}),
      });
    }
  }

  /**
   * Runs `fn` (synchronous, one statement or one transaction). While another process holds the
   * write lock, retries with backoff until lockWaitMs has passed, then answers unavailable. A busy
   * attempt did nothing (BEGIN IMMEDIATE takes the lock first), so retrying it is safe.
   */
  attempt<T>(fn: () => T, changes?: (result: T | undefined) => Change[]): Promise<T> {
    try {
      return Promise.resolve(this.once(fn, changes));
    } catch (err) {
      return this.retryWhileBusy(err, fn, changes);
    }
  }

  /**
   * `fn` once. A write (with `changes`): the cache forgets what it touched in the same synchronous
   * step as the commit, so no request can be answered from the cache in between; on failure too,
   * to be safe.
   */
  once<T>(fn: () => T, changes?: (result: T | undefined) => Change[]): T {
    if (!changes) return guard(fn);
    let result: T | undefined;
    try {
      result = guard(fn);
      return result;
    } finally {
      report(this.observer, changes(result));
    }
  }

  /** After a first try failed with `first`: attempt's retries, while the failure is the write lock. */
  private async retryWhileBusy<T>(
    first: unknown,
    fn: () => T,
    changes?: (result: T | undefined) => Change[],
  ): Promise<T> {
    const deadline = Date.now() + this.lockWaitMs;
    let pause = 1;
    let err = first;
    for (;;) {
      const busy = err instanceof StoreUnavailableError && /SQLITE_BUSY/.test(err.message);
      if (!busy || Date.now() >= deadline) throw err;
      await sleep(Math.min(pause, Math.max(1, deadline - Date.now())));
      pause = Math.min(pause * 2, 25);
      try {
        return this.once(fn, changes);
      } catch (e) {
        err = e;
      }
    }
  }

  /**
   * A write: attempt(fn, changes), answered once what it committed is on disk. Every method that
   * writes goes through here, the group commit of consumptions (flushUsage) included. Durability is
   * asked for in the same synchronous step as the commit, so a commit held for the fdatasync under
   * way (WalSync.beforeNext) joins the next one, whatever else waits for it.
   */
  write<T>(body: () => T, changes: (result: T | undefined) => Change[] = () => []): Promise<T> {
    if (this.walSync?.failure) return Promise.reject(this.walSync.failure);
    const own = this.writer?.own;
    const fn = own ? () => this.counted(own, body) : body;
    // While the checkpoint thread starts the WAL over, writes wait in memory (checkpointer.ts).
    const held = this.checkpointer?.held;
    if (held) return held.then(() => this.write(body, changes));
    let result: T;
    const started = this.checkpointer ? performance.now() : 0;
    try {
      result = this.once(fn, changes);
    } catch (err) {
      return this.retryWhileBusy(err, fn, changes).then(
        (r) => {
          this.refusal = undefined;
          this.checkpointer?.committed(0, performance.now());
          return this.whenDurable(r);
        },
        (failure: unknown) => {
          if (failure instanceof StoreUnavailableError) this.refusal = failure;
          throw failure;
        },
      );
    }
    this.refusal = undefined;
    if (this.checkpointer) {
      const now = performance.now();
      // How long the commit blocked the loop tells whether SQLite checkpointed in it (checkpointer.ts).
      this.checkpointer.committed(now - started, now);
    }
    return this.whenDurable(result);
  }

  /**
   * `body` in a transaction of its own that is counted as this process's commit: it updates the
   * counter row (so that it moves the WAL index's count however alike its pages came out), and the
   * shared count moves around its COMMIT (own-commits.ts). Transactions `body` opens are savepoints in it.
   */
  private counted<T>(own: OwnCommits, body: () => T): T {
    this.sql('BEGIN IMMEDIATE').run();
    let result: T;
    try {
      result = body();
      this.sql(COUNT_COMMIT_SQL).run();
    } catch (err) {
      if (this.db.inTransaction) this.sql('ROLLBACK').run();
      throw err;
    }
    own.beforeCommit();
    try {
      this.sql('COMMIT').run();
    } catch (err) {
      own.afterCommit(false);
      if (this.db.inTransaction) this.sql('ROLLBACK').run();
      throw err;
    }
    own.afterCommit(true);
    return result;
  }

  /** `result`, once everything committed so far is on disk. */
  private whenDurable<T>(result: T): Promise<T> {
    const durable = this.walSync?.durable();
    return durable ? durable.then(() => result) : Promise.resolve(result);
  }

  /** A write of several statements: write(fn, changes) with fn in one IMMEDIATE transaction. */
  writeTx<T>(body: () => T, changes?: (result: T | undefined) => Change[]): Promise<T> {
    return this.write(() => this.db.transaction(body).immediate(), changes);
  }

  /**
   * Another process (a second server, the CLI) may have committed to the file: SQLite's
   * data_version moves when it did, and then nothing cached can be trusted. Checked before cached
   * reads, at most once per turn of the event loop: reads within one turn are concurrent requests,
   * and a commit made elsewhere before a turn is seen by every read in it.
   */
  syncWithOtherProcesses(): void {
    if (this.versionCheckedThisTurn) return;
    // Read first: a check that failed must not count as done for the rest of the turn.
    this.checkDataVersion();
    this.versionCheckedThisTurn = true;
    setImmediate(this.endTurn);
  }

  /**
   * Reports 'all' if another process committed since the last check. data_version moves for the
   * writer thread's commits too: once it runs, the WAL index tells whose they were.
   */
  checkDataVersion(): void {
    const v = this.dataVersionStatement.get() as number;
    if (v === this.dataVersion) return;
    this.dataVersion = v;
    const own = this.writer?.own;
    if (own?.onlyOwnSinceBase()) return;
    report(this.observer, ALL);
    // What the cache holds from here on is read after those commits: counted from now.
    own?.rebase();
  }

  /**
   * The writer thread, started at the first batch that charges of a serving process whose database
   * is a WAL file; undefined otherwise (or while it cannot run). It answers batches once it is ready.
   */
  startWriter(): SqliteWriter | undefined {
    if (this.writer) return this.writer.failure ? undefined : this.writer;
    if (!this.writerWanted || !this.walSync || this.walSync.failure) return undefined;
    let own: OwnCommits;
    try {
      own = new OwnCommits(`${this.path}-shm`);
    } catch (err) {
      this.warn?.('SQLite consumptions stay on the event loop: the WAL index could not be read', {
        err: { message: (err as Error).message },
      });
      return undefined;
    }
    own.rebase();
    // Checkpoints beside the writes, never in the writer's commits (where they would hold every
    // batch behind them): the checkpoint thread runs from the start.
    this.checkpointer?.startNow();
    // The writer holds the lock for most of each of its transactions: this connection's writes wait
    // for it off the event loop (retryWhileBusy) rather than in SQLite's blocking wait.
    this.db.pragma(`busy_timeout = ${WRITER_BUSY_MS}`);
    this.writer = new SqliteWriter(this.path, own, this.warn, this.checkpointer?.active === true);
    return this.writer.failure ? undefined : this.writer;
  }

  /** False only when even the version check failed (the reads that follow will say why). */
  inSync(): boolean {
    try {
      this.syncWithOtherProcesses();
      return true;
    } catch {
      return false;
    }
  }

  private versionCheckedThisTurn = false;
  private readonly endTurn = () => {
    this.versionCheckedThisTurn = false;
  };

  /** Prepared once, reused: statements are the hot path. */
  sql(text: string): SqliteStatement {
    let s = this.statements.get(text);
    if (!s) {
      s = this.db.prepare(text);
      this.statements.set(text, s);
    }
    return s;
  }

  async ping(): Promise<void> {
    if (this.walSync?.failure) throw this.walSync.failure;
    await this.attempt(() => this.sql('SELECT 1').get());
  }

  /**
   * ping() while writes go through. Once one was refused as unavailable, a probe write instead: a
   * row added and removed in one transaction, committed and made durable like any write. A row
   * rewritten as it is would not do: SQLite writes no page whose bytes did not change. The row
   * carries a quarter MiB, so that the few WAL frames a refused write left behind on a full disk
   * do not make it ready: writes of some size must fit again.
   */
  async ready(): Promise<void> {
    if (!this.refusal) return this.ping();
    await this.writeTx(() => {
      this.sql(
        'INSERT INTO schema_migrations (version, name, applied_at) VALUES (-1, zeroblob(262144), 0)',
      ).run();
      this.sql('DELETE FROM schema_migrations WHERE version = -1').run();
    });
  }

  async close(): Promise<void> {
    // The writer's batches answered first; the last connection to close checkpoints the rest.
    await this.writer?.close();
    await this.checkpointer?.close();
    await this.walSync?.close();
    if (this.db.open) this.db.close();
  }
}
