/**
 * @module The embedded SQLite store (better-sqlite3). WAL journal: a write is answered only once it
 * is on disk, so it survives a crash of the process and of the machine. The commit itself runs with
 * synchronous=NORMAL and the fdatasync of the WAL that makes it durable runs off the event loop
 * (wal-sync.ts), shared by the commits of the moment. Writes run in BEGIN IMMEDIATE transactions,
 * so concurrent processes on one file serialise on the write lock.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { Account } from '../../domain/accounts.js';
import { type ApiKeyRecord, LAST_USED_RESOLUTION_SECONDS } from '../../domain/api-keys.js';
import type { AuditEntry } from '../../domain/audit.js';
import type { EpochSeconds } from '../../domain/clock.js';
import { StoreUnavailableError } from '../../domain/errors.js';
import { applyConsumption, sameSlot, type WindowSlot, type WindowState } from '../../domain/fair-use.js';
import { type LedgerEntry, ledgerDelta, replayOrConflict } from '../../domain/ledger.js';
import { type Category, type Plan, WINDOW_SLOTS } from '../../domain/plans.js';
import type { User } from '../../domain/users.js';
import { type AccountUsage, type Change, type ChangeObserver, report } from '../changes.js';
import { MIGRATIONS, migrationLabel } from '../migrations/index.js';
import { Rollback } from '../rollback.js';
import {
  type AccountRow,
  type AuditRow,
  boolToInt,
  type KeyRow,
  type LedgerRow,
  type PlanRow,
  toAccount,
  toAudit,
  toKey,
  toLedger,
  toPlan,
  toUser,
  type UserRow,
} from '../rows.js';
import {
  type AccountPatch,
  type AccountSnapshot,
  type AuditQuery,
  chargeEntry,
  type KeyEntry,
  type LedgerAppend,
  type LedgerOutcome,
  type Page,
  type Store,
  type UsageCommit,
  type UsageOutcome,
} from '../store.js';
import { guard, type SqliteDatabase, type SqliteStatement } from './driver.js';
import { WalSync } from './wal-sync.js';

export interface SqliteStoreOptions {
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
}

const SYNC_BUSY_MS = 5;
/** Most consumptions written by one group commit. */
const MAX_USAGE_BATCH = 500;

interface PendingUsage {
  c: UsageCommit;
  audit?: AuditEntry;
  resolve: (outcome: UsageOutcome) => void;
  reject: (err: unknown) => void;
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class SqliteStore implements Store {
  readonly backend = 'sqlite' as const;
  private readonly db: SqliteDatabase;
  private readonly statements = new Map<string, SqliteStatement>();
  /** addToWindows' upserts, by slotsKey (at most one per category and list of windows a consumption touches). */
  private readonly windowsUpserts = new Map<number, SqliteStatement>();
  private readonly lockWaitMs: number;
  private readonly walSync: WalSync | undefined;
  private readonly observer: ChangeObserver | undefined;
  private pendingUsage: PendingUsage[] = [];
  private usageFlushScheduled = false;
  private dataVersion = -1;
  private readonly dataVersionStatement: SqliteStatement;
  private readonly consumeBatchTx: { immediate(batch: PendingUsage[]): BatchResult };

  constructor(options: SqliteStoreOptions) {
    if (options.path !== ':memory:') mkdirSync(dirname(options.path), { recursive: true });
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
    this.dataVersionStatement = this.db.prepare('PRAGMA data_version').pluck();
    // The group commit's transaction: each consumption of the batch all-or-nothing by itself.
    this.consumeBatchTx = this.db.transaction((batch: PendingUsage[]) => {
      // Under the write lock from here to COMMIT: once other processes' commits are reported, what
      // the observer knows of windows and balances is the database's, and nothing else can change it.
      this.checkDataVersion();
      const decided = new Map<string, AccountUsage>();
      return { outcomes: batch.map((item) => this.consumeInBatch(item.c, item.audit, decided)), decided };
    });
  }

  /**
   * Runs `fn` (synchronous, one statement or one transaction). While another process holds the
   * write lock, retries with backoff until lockWaitMs has passed, then answers unavailable. A busy
   * attempt did nothing (BEGIN IMMEDIATE takes the lock first), so retrying it is safe.
   */
  private attempt<T>(fn: () => T, changes?: (result: T | undefined) => Change[]): Promise<T> {
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
  private once<T>(fn: () => T, changes?: (result: T | undefined) => Change[]): T {
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
  private write<T>(fn: () => T, changes: (result: T | undefined) => Change[] = () => []): Promise<T> {
    if (this.walSync?.failure) return Promise.reject(this.walSync.failure);
    let result: T;
    try {
      result = this.once(fn, changes);
    } catch (err) {
      return this.retryWhileBusy(err, fn, changes).then((r) => this.whenDurable(r));
    }
    return this.whenDurable(result);
  }

  /** `result`, once everything committed so far is on disk. */
  private whenDurable<T>(result: T): Promise<T> {
    const durable = this.walSync?.durable();
    return durable ? durable.then(() => result) : Promise.resolve(result);
  }

  /** A write of several statements: write(fn, changes) with fn in one IMMEDIATE transaction. */
  private writeTx<T>(body: () => T, changes?: (result: T | undefined) => Change[]): Promise<T> {
    return this.write(() => this.db.transaction(body).immediate(), changes);
  }

  /**
   * Another process (a second server, the CLI) may have committed to the file: SQLite's
   * data_version moves when it did, and then nothing cached can be trusted. Checked before cached
   * reads, at most once per turn of the event loop: reads within one turn are concurrent requests,
   * and a commit made elsewhere before a turn is seen by every read in it.
   */
  private syncWithOtherProcesses(): void {
    if (this.versionCheckedThisTurn) return;
    // Read first: a check that failed must not count as done for the rest of the turn.
    this.checkDataVersion();
    this.versionCheckedThisTurn = true;
    setImmediate(this.endTurn);
  }

  /** Reports 'all' if another process committed since the last check. */
  private checkDataVersion(): void {
    const v = this.dataVersionStatement.get() as number;
    if (v !== this.dataVersion) {
      this.dataVersion = v;
      report(this.observer, ALL);
    }
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
  private sql(text: string): SqliteStatement {
    let s = this.statements.get(text);
    if (!s) {
      s = this.db.prepare(text);
      this.statements.set(text, s);
    }
    return s;
  }

  async migrate(plans: readonly Plan[], now: EpochSeconds): Promise<{ applied: string[] }> {
    return this.writeTx(
      () => {
        this.db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
            version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`);
        const done = new Set(
          (this.db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map(
            (r) => r.version,
          ),
        );
        const applied: string[] = [];
        for (const m of MIGRATIONS) {
          if (done.has(m.version)) continue;
          this.db.exec(m.sqlite);
          this.db
            .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
            .run(m.version, m.name, now);
          applied.push(migrationLabel(m));
        }
        const { n } = this.db.prepare('SELECT count(*) AS n FROM plans').get() as { n: number };
        if (n === 0) for (const p of plans) this.insertPlan(p, now);
        return { applied };
      },
      () => ['all'],
    );
  }

  /** fdatasyncs of the WAL done so far, each making the commits before it durable (diagnostics). */
  get walSyncs(): number {
    return this.walSync?.syncs ?? 0;
  }

  async ping(): Promise<void> {
    if (this.walSync?.failure) throw this.walSync.failure;
    await this.attempt(() => this.sql('SELECT 1').get());
  }

  async close(): Promise<void> {
    await this.walSync?.close();
    if (this.db.open) this.db.close();
  }

  async listPlans(): Promise<Plan[]> {
    return this.attempt(() =>
      (this.sql('SELECT id, unlimited, limits FROM plans ORDER BY id').all() as PlanRow[]).map(toPlan),
    );
  }

  async getPlan(id: string): Promise<Plan | undefined> {
    const row = await this.attempt(
      () => this.sql('SELECT id, unlimited, limits FROM plans WHERE id = ?').get(id) as PlanRow | undefined,
    );
    return row && toPlan(row);
  }

  async putPlan(plan: Plan, now: EpochSeconds, audit?: AuditEntry): Promise<void> {
    await this.writeTx(
      () => {
        this.insertPlan(plan, now);
        this.writeAudit(audit);
      },
      () => ['all'],
    );
  }

  private insertPlan(plan: Plan, now: EpochSeconds): void {
    this.sql(
      `INSERT INTO plans (id, unlimited, limits, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET unlimited = excluded.unlimited, limits = excluded.limits,
         updated_at = excluded.updated_at`,
    ).run(plan.id, plan.unlimited ? 1 : 0, JSON.stringify(plan.limits), now, now);
  }

  async createAccount(account: Account, openingGrant?: LedgerAppend, audit?: AuditEntry): Promise<void> {
    await this.writeTx(
      () => {
        this.sql(
          `INSERT INTO accounts (id, name, plan_id, status, unlimited_override, token_balance, created_at, updated_at)
             VALUES (?, ?, ?, ?, ?, 0, ?, ?)`,
        ).run(
          account.id,
          account.name,
          account.planId,
          account.status,
          boolToInt(account.unlimitedOverride),
          account.createdAt,
          account.updatedAt,
        );
        if (openingGrant) {
          const outcome = this.applyLedger(openingGrant);
          if (outcome.kind !== 'applied') throw new Error(`Opening grant not applied: ${outcome.kind}`);
        }
        this.writeAudit(audit);
      },
      () => [{ account: account.id }],
    );
  }

  async getAccount(id: string): Promise<Account | undefined> {
    const row = await this.attempt(
      () => this.sql('SELECT * FROM accounts WHERE id = ?').get(id) as AccountRow | undefined,
    );
    return row && toAccount(row);
  }

  async listAccounts(page: Page): Promise<Account[]> {
    const rows = await this.attempt(
      () =>
        this.sql('SELECT * FROM accounts WHERE id > ? ORDER BY id LIMIT ?').all(
          page.after ?? '',
          page.limit,
        ) as AccountRow[],
    );
    return rows.map(toAccount);
  }

  async countAccounts(): Promise<number> {
    return this.attempt(() => (this.sql('SELECT count(*) AS n FROM accounts').get() as { n: number }).n);
  }

  async updateAccount(
    id: string,
    patch: AccountPatch,
    now: EpochSeconds,
    audit?: AuditEntry,
  ): Promise<Account | undefined> {
    return this.writeTx(
      () => {
        const row = this.sql(
          `UPDATE accounts SET
               name = coalesce(?, name),
               plan_id = coalesce(?, plan_id),
               status = coalesce(?, status),
               unlimited_override = CASE WHEN ? THEN ? ELSE unlimited_override END,
               updated_at = ?
             WHERE id = ? RETURNING *`,
        ).get(
          patch.name ?? null,
          patch.planId ?? null,
          patch.status ?? null,
          patch.unlimitedOverride !== undefined ? 1 : 0,
          boolToInt(patch.unlimitedOverride ?? null),
          now,
          id,
        ) as AccountRow | undefined;
        if (row && patch.status === 'closed') {
          this.sql('UPDATE api_keys SET revoked_at = ? WHERE account_id = ? AND revoked_at IS NULL').run(
            now,
            id,
          );
        }
        if (row) this.writeAudit(audit);
        return row && toAccount(row);
      },
      (): Change[] => (patch.status === 'closed' ? [{ account: id }, 'keys'] : [{ account: id }]),
    );
  }

  async createApiKey(key: ApiKeyRecord, digest: string, audit?: AuditEntry): Promise<void> {
    await this.writeTx(
      () => {
        this.sql(
          `INSERT INTO api_keys (id, account_id, name, digest, hint, created_at, revoked_at, last_used_at)
             VALUES (?, ?, ?, ?, ?, ?, NULL, NULL)`,
        ).run(key.id, key.accountId, key.name, digest, key.hint, key.createdAt);
        this.writeAudit(audit);
      },
      () => [{ account: key.accountId }],
    );
  }

  private static readonly KEY_COLUMNS = 'id, account_id, name, hint, created_at, revoked_at, last_used_at';

  async getApiKey(id: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.attempt(
      () =>
        this.sql(`SELECT ${SqliteStore.KEY_COLUMNS} FROM api_keys WHERE id = ?`).get(id) as
          | KeyRow
          | undefined,
    );
    return row && toKey(row);
  }

  async listApiKeys(accountId: string): Promise<ApiKeyRecord[]> {
    const rows = await this.attempt(
      () =>
        this.sql(`SELECT ${SqliteStore.KEY_COLUMNS} FROM api_keys WHERE account_id = ? ORDER BY id`).all(
          accountId,
        ) as KeyRow[],
    );
    return rows.map(toKey);
  }

  async revokeApiKey(id: string, now: EpochSeconds, audit?: AuditEntry): Promise<ApiKeyRecord | undefined> {
    await this.writeTx(
      () => {
        const { changes } = this.sql(
          'UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
        ).run(now, id);
        if (changes === 1) this.writeAudit(audit);
        const key = this.sql('SELECT account_id FROM api_keys WHERE id = ?').get(id) as
          | { account_id: string }
          | undefined;
        return key?.account_id;
      },
      (accountId): Change[] => (accountId ? ['keys', { account: accountId }] : ['keys']),
    );
    return this.getApiKey(id);
  }

  async rehashApiKey(id: string, oldDigest: string, newDigest: string): Promise<void> {
    await this.write(
      () =>
        this.sql('UPDATE api_keys SET digest = ? WHERE id = ? AND digest = ?').run(newDigest, id, oldDigest),
      () => ['keys'],
    );
  }

  async touchApiKeys(entries: readonly { id: string; at: EpochSeconds }[]): Promise<void> {
    if (entries.length === 0) return;
    await this.writeTx(() => {
      const touch = this.sql(
        'UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at <= ?)',
      );
      for (const e of entries) touch.run(e.at, e.id, e.at - LAST_USED_RESOLUTION_SECONDS);
    });
  }

  findActiveKey(digest: string): Promise<KeyEntry | undefined> {
    return this.attempt(() => {
      const row = this.sql('SELECT id, account_id FROM api_keys WHERE digest = ? AND revoked_at IS NULL').get(
        digest,
      ) as { id: string; account_id: string } | undefined;
      return row && { keyId: row.id, accountId: row.account_id };
    });
  }

  async addUser(user: User, audit?: AuditEntry): Promise<'added' | 'duplicate'> {
    return this.writeTx(
      () => {
        const { changes } = this.sql(
          `INSERT INTO users (id, account_id, email, role, created_at) VALUES (?, ?, ?, ?, ?)
             ON CONFLICT (account_id, email) DO NOTHING`,
        ).run(user.id, user.accountId, user.email, user.role, user.createdAt);
        if (changes !== 1) return 'duplicate' as const;
        this.writeAudit(audit);
        return 'added' as const;
      },
      () => [{ account: user.accountId }],
    );
  }

  async getUser(id: string): Promise<User | undefined> {
    const row = await this.attempt(
      () => this.sql('SELECT * FROM users WHERE id = ?').get(id) as UserRow | undefined,
    );
    return row && toUser(row);
  }

  async listUsers(accountId: string): Promise<User[]> {
    return this.attempt(() =>
      (this.sql('SELECT * FROM users WHERE account_id = ? ORDER BY id').all(accountId) as UserRow[]).map(
        toUser,
      ),
    );
  }

  async removeUser(id: string, audit?: AuditEntry): Promise<User | undefined> {
    const row = await this.writeTx(
      () => {
        const removed = this.sql('DELETE FROM users WHERE id = ? RETURNING *').get(id) as UserRow | undefined;
        if (removed) this.writeAudit(audit);
        return removed;
      },
      (removed): Change[] => (removed ? [{ account: removed.account_id }] : []),
    );
    return row && toUser(row);
  }

  getSnapshot(accountId: string): Promise<AccountSnapshot | undefined> {
    return this.attempt(() => {
      const row = this.sql(
        `SELECT a.*, p.unlimited AS plan_unlimited, p.limits AS plan_limits,
           (SELECT count(*) FROM api_keys k WHERE k.account_id = a.id AND k.revoked_at IS NULL) AS api_key_count,
           (SELECT count(*) FROM users u WHERE u.account_id = a.id) AS user_count
         FROM accounts a JOIN plans p ON p.id = a.plan_id WHERE a.id = ?`,
      ).get(accountId) as
        | (AccountRow & {
            plan_unlimited: number;
            plan_limits: string;
            api_key_count: number;
            user_count: number;
          })
        | undefined;
      if (!row) return undefined;
      return {
        account: toAccount(row),
        plan: toPlan({ id: row.plan_id, unlimited: row.plan_unlimited, limits: row.plan_limits }),
        apiKeyCount: row.api_key_count,
        userCount: row.user_count,
        windows: this.windowsOf(accountId),
      };
    });
  }

  /**
   * Read before every consumption not cached (and for each snapshot): a row per category (migration
   * 003), as arrays, which better-sqlite3 builds faster than objects; windows never started are NULL.
   */
  private windowsOf(accountId: string): WindowState[] {
    const rows = this.sql(WINDOWS_SELECT).raw().all(accountId) as (string | number | null)[][];
    const windows: WindowState[] = [];
    for (const row of rows) {
      const category = row[0] as Category;
      for (let i = 0; i < WINDOW_COLUMNS.length; i++) {
        const startedAt = row[1 + 3 * i] as number | null;
        if (startedAt === null) continue;
        const { unit, window } = WINDOW_COLUMNS[i]!;
        windows.push({
          category,
          unit,
          window,
          startedAt,
          endsAt: row[2 + 3 * i] as number,
          used: row[3 + 3 * i] as number,
        });
      }
    }
    return windows;
  }

  async appendLedger(entry: LedgerAppend, audit?: AuditEntry): Promise<LedgerOutcome> {
    return this.write(
      () => {
        try {
          return this.db
            .transaction(() => {
              const outcome = this.applyLedger(entry);
              if (outcome.kind === 'applied') this.writeAudit(audit);
              return outcome;
            })
            .immediate();
        } catch (err) {
          if (err instanceof Rollback) return err.outcome as LedgerOutcome;
          throw err;
        }
      },
      () => [{ account: entry.accountId }],
    );
  }

  /** Inside a transaction: replay, refuse, or move the balance and append the entry. */
  private applyLedger(entry: LedgerAppend): LedgerOutcome {
    if (entry.idempotencyKey !== null) {
      const prior = this.sql('SELECT * FROM token_ledger WHERE account_id = ? AND idempotency_key = ?').get(
        entry.accountId,
        entry.idempotencyKey,
      ) as LedgerRow | undefined;
      if (prior) {
        return replayOrConflict(prior.request_hash, entry.requestHash, () => ({
          kind: 'replayed' as const,
          entry: toLedger(prior),
        }));
      }
    }
    const delta = ledgerDelta(entry.kind, entry.amount);
    // One conditional statement: the balance moves only if it stays >= 0.
    const moved = this.sql(
      'UPDATE accounts SET token_balance = token_balance + ? WHERE id = ? AND token_balance + ? >= 0 RETURNING token_balance',
    ).get(delta, entry.accountId, delta) as { token_balance: number } | undefined;
    if (!moved) {
      const acc = this.sql('SELECT token_balance FROM accounts WHERE id = ?').get(entry.accountId) as
        | { token_balance: number }
        | undefined;
      throw new Rollback(acc ? { kind: 'insufficient', balance: acc.token_balance } : { kind: 'not_found' });
    }
    const row = this.sql(
      `INSERT INTO token_ledger (id, account_id, kind, amount, delta, balance_after, reason, idempotency_key, request_hash, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
    ).get(
      entry.id,
      entry.accountId,
      entry.kind,
      entry.amount,
      delta,
      moved.token_balance,
      entry.reason,
      entry.idempotencyKey,
      entry.requestHash,
      entry.createdAt,
    ) as LedgerRow;
    return { kind: 'applied', entry: toLedger(row) };
  }

  async listLedger(accountId: string, page: Page): Promise<LedgerEntry[]> {
    return this.attempt(() =>
      (
        this.sql('SELECT * FROM token_ledger WHERE account_id = ? AND id > ? ORDER BY id LIMIT ?').all(
          accountId,
          page.after ?? '',
          page.limit,
        ) as LedgerRow[]
      ).map(toLedger),
    );
  }

  /**
   * Group commit: consumptions are written in one transaction, so they share one fdatasync. While
   * the WAL's fdatasync runs, those that arrive are held and committed the moment it ends, just
   * before the next one starts: they could not be durable any sooner, and the batch is as large as
   * it can be. Otherwise those of the same turn of the event loop are committed at its end. Each is
   * still all-or-nothing by itself (decided before its first write), and each caller is answered
   * only once the shared COMMIT is durable.
   */
  async commitUsage(c: UsageCommit, audit?: AuditEntry): Promise<UsageOutcome> {
    return new Promise<UsageOutcome>((resolve, reject) => {
      this.pendingUsage.push(audit ? { c, audit, resolve, reject } : { c, resolve, reject });
      if (!this.usageFlushScheduled) {
        this.usageFlushScheduled = true;
        if (this.walSync?.busy) this.walSync.beforeNext(this.flushHeldUsage);
        else setImmediate(this.flushHeldUsage);
      }
    });
  }

  /** flushUsage, as a callback made once (no closure per batch). */
  private readonly flushHeldUsage = () => void this.flushUsage();

  private async flushUsage(): Promise<void> {
    this.usageFlushScheduled = false;
    const batch = this.pendingUsage.splice(0, MAX_USAGE_BATCH);
    if (this.pendingUsage.length > 0) {
      this.usageFlushScheduled = true;
      setImmediate(this.flushHeldUsage);
    }
    try {
      const { outcomes } = await this.write(
        () => this.consumeBatchTx.immediate(batch),
        // Committed in this synchronous step, under the write lock: each account consumed is reported
        // with the windows and balance it was left with. Refused ones changed nothing; a failed batch
        // reports every account it held.
        (result): Change[] => {
          const changes: Change[] = [];
          if (!result) {
            for (const item of batch) changes.push({ account: item.c.accountId });
            return changes;
          }
          for (const [account, after] of result.decided) changes.push({ account, after });
          return changes;
        },
      );
      batch.forEach((item, i) => {
        const outcome = outcomes[i]!;
        if (outcome instanceof Error) item.reject(outcome);
        else item.resolve(outcome);
      });
    } catch (err) {
      for (const item of batch) item.reject(err);
    }
  }

  /**
   * One consumption inside the batch's transaction. A refusal, or a failure before its first write,
   * answers for this consumption alone; a failure of the database, or one after a write, fails the
   * whole batch (its COMMIT could not stand).
   */
  private consumeInBatch(
    c: UsageCommit,
    audit: AuditEntry | undefined,
    decided: Map<string, AccountUsage>,
  ): UsageOutcome | Error {
    try {
      return this.consume(c, audit, decided);
    } catch (err) {
      if (err instanceof StoreUnavailableError || (err as { code?: string }).code?.startsWith('SQLITE_IOERR'))
        throw err;
      return err as Error;
    }
  }

  /**
   * An account's windows and balance as they stand in this transaction: as an earlier consumption
   * of the batch left them, else as cached (exact under the write lock once the data version was
   * checked: every commit of this process updates or forgets what it touched), else read.
   * Undefined: no such account.
   */
  private usageOf(accountId: string, decided: Map<string, AccountUsage>): AccountUsage | undefined {
    const earlier = decided.get(accountId);
    if (earlier) return earlier;
    const known = this.observer?.usage(accountId);
    if (known) return known;
    const account = this.sql('SELECT token_balance FROM accounts WHERE id = ?').get(accountId) as
      | { token_balance: number }
      | undefined;
    return account && { windows: this.windowsOf(accountId), tokenBalance: account.token_balance };
  }

  /**
   * All of a consumption's windows in one conditional upsert of its category's row: each window
   * starts if it is not running and adds to it if it fits under its limit (the insert only if each
   * amount alone fits). Its change count says whether the row took every amount (no RETURNING:
   * SQLite buffers returned rows, which costs more than the upsert). Positional parameters, passed
   * as arguments: better-sqlite3 binds named ones by looking each name up on an object, which cost
   * as much again, and an array's elements one by one through V8's generic property lookup
   * (docs/performance.md, callgrind).
   */
  private addToWindows(c: UsageCommit): boolean {
    const incs = c.increments;
    if (incs.length === 0) return true;
    const params: unknown[] = [c.accountId, c.now];
    for (const inc of incs) params.push(c.now + inc.lengthSeconds, inc.amount);
    // Each limit twice: for the insert's condition, then for the update's.
    for (let twice = 0; twice < 2; twice++) for (const inc of incs) params.push(inc.limit);
    const key = slotsKey(incs);
    let upsert = this.windowsUpserts.get(key);
    if (!upsert) {
      upsert = this.db.prepare(windowsUpsertSql(incs));
      this.windowsUpserts.set(key, upsert);
    }
    return upsert.run(...params).changes === 1;
  }

  /** The answer, kept for replays when the consumption has an idempotency key. */
  private keepForReplay(c: UsageCommit, response: unknown): void {
    if (!c.idempotency) return;
    this.sql(
      `INSERT INTO usage_idempotency (account_id, idempotency_key, request_hash, response, created_at)
       VALUES (?, ?, ?, ?, ?)`,
    ).run(c.accountId, c.idempotency.key, c.idempotency.requestHash, JSON.stringify(response), c.now);
  }

  /**
   * One consumption, in no savepoint of its own: everything that could refuse it is decided before
   * its first write, in the order of the checks (an idempotent replay, the account, the windows by
   * the domain's reference semantics, then the charge against the balance). Nothing can change in
   * between (the same synchronous step, under the write lock), so the writes cannot be refused; the
   * windows and balance after are the ones decided, not read back. Should a write fail anyway, the
   * whole batch fails rather than keep half a consumption.
   */
  private consume(
    c: UsageCommit,
    audit: AuditEntry | undefined,
    decided: Map<string, AccountUsage>,
  ): UsageOutcome {
    if (c.idempotency) {
      const prior = this.sql(
        'SELECT request_hash, response FROM usage_idempotency WHERE account_id = ? AND idempotency_key = ?',
      ).get(c.accountId, c.idempotency.key) as { request_hash: string; response: string } | undefined;
      if (prior) {
        return replayOrConflict(prior.request_hash, c.idempotency.requestHash, () => ({
          kind: 'replayed' as const,
          response: JSON.parse(prior.response),
        }));
      }
    }
    const before = this.usageOf(c.accountId, decided);
    if (!before) return { kind: 'not_found' };
    const applied = applyConsumption(before.windows, c.increments, c.now);
    if (!applied.ok) return { kind: 'exceeded', exceeded: applied.exceeded };
    let balanceAfter: number | null = null;
    if (c.charge) {
      // The same condition as applyLedger's conditional update: the balance stays >= 0.
      balanceAfter = before.tokenBalance + ledgerDelta('charge', c.charge.amount);
      if (balanceAfter < 0) return { kind: 'insufficient', balance: before.tokenBalance };
    }
    // Already in key order unless a window was started, which most consumptions do not.
    const windows = inKeyOrder(applied.states);
    // Before the first write: should rendering fail, only this consumption does.
    const response = c.render(windows, balanceAfter);
    try {
      if (!this.addToWindows(c)) throw new Error('a window refused its amount');
      if (c.charge) {
        const charged = this.applyLedger(chargeEntry(c, c.charge));
        if (charged.kind !== 'applied' || charged.entry.balanceAfter !== balanceAfter)
          throw new Error(`the charge was not applied as decided (${charged.kind})`);
      }
      this.keepForReplay(c, response);
      this.writeAudit(audit);
    } catch (err) {
      throw new StoreUnavailableError(
        `a consumption failed after its first write, so its batch is not committed: ${(err as Error).message}`,
      );
    }
    decided.set(c.accountId, { windows, tokenBalance: balanceAfter ?? before.tokenBalance });
    return { kind: 'committed', response };
  }

  /** Inside the transaction of the action it describes. */
  private writeAudit(audit: AuditEntry | undefined): void {
    if (!audit) return;
    this.sql(
      `INSERT INTO audit_log (id, at, actor, action, account_id, target_id, details)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      audit.id,
      audit.at,
      audit.actor,
      audit.action,
      audit.accountId,
      audit.targetId,
      JSON.stringify(audit.details),
    );
  }

  async listAudit(q: AuditQuery): Promise<AuditEntry[]> {
    const rows = await this.attempt(
      () =>
        (q.accountId === undefined
          ? this.sql('SELECT * FROM audit_log WHERE id > ? ORDER BY id LIMIT ?').all(q.after ?? '', q.limit)
          : this.sql('SELECT * FROM audit_log WHERE account_id = ? AND id > ? ORDER BY id LIMIT ?').all(
              q.accountId,
              q.after ?? '',
              q.limit,
            )) as AuditRow[],
    );
    return rows.map(toAudit);
  }
}

/** A group commit's outcomes, and the windows and balance it left each account it consumed from. */
interface BatchResult {
  outcomes: (UsageOutcome | Error)[];
  decided: Map<string, AccountUsage>;
}

const ALL: readonly Change[] = ['all'];

/**
 * A number for the list of slots of these windows, in order (their places in WINDOW_SLOTS): cheaper
 * to look up than a joined string.
 */
function slotsKey(incs: UsageCommit['increments']): number {
  let key = 0;
  for (const inc of incs) {
    const n = WINDOW_SLOTS.findIndex((slot) => sameSlot(slot, inc));
    if (n < 0) throw new Error(`no window ${inc.category}.${inc.unit}.${inc.window}`);
    key = key * (WINDOW_SLOTS.length + 1) + n + 1;
  }
  return key;
}

/** In the primary key's order, as a read gives them; sorted only if not (sorting allocates). */
function inKeyOrder(windows: WindowState[]): WindowState[] {
  for (let i = 1; i < windows.length; i++) {
    if (byWindowKey(windows[i - 1]!, windows[i]!) > 0) return windows.sort(byWindowKey);
  }
  return windows;
}

/** The columns' name of a window in a fair_use row (migration 003): `<unit>_<window>`, then `_start`, `_end`, `_used`. */
const columnOf = (w: { unit: string; window: string }) => `${w.unit}_${w.window}`;

/** A fair_use row's windows, each three columns, in the windows' key order (that of one category's slots). */
const WINDOW_COLUMNS = WINDOW_SLOTS.filter((s) => s.category === WINDOW_SLOTS[0]!.category)
  .sort(byWindowKey)
  .map((w) => ({ unit: w.unit, window: w.window, column: columnOf(w) }));

const WINDOWS_SELECT = `SELECT category, ${WINDOW_COLUMNS.map(({ column: w }) => `${w}_start, ${w}_end, ${w}_used`).join(', ')}
  FROM fair_use WHERE account_id = ?`;

/** Whether window `w` of the row is running at the consumption's time (never started: NULL, not running). */
const running = (w: string) => `w.${w}_end > excluded.${w}_start`;

/** Window `w` of the row after the consumption: added to while running, else started again with the amount. */
const windowUpdate = (w: string) =>
  `${w}_used = CASE WHEN ${running(w)} THEN w.${w}_used + excluded.${w}_used ELSE excluded.${w}_used END,
         ${w}_start = CASE WHEN ${running(w)} THEN w.${w}_start ELSE excluded.${w}_start END,
         ${w}_end = CASE WHEN ${running(w)} THEN w.${w}_end ELSE excluded.${w}_end END`;

/** Window `w` takes the amount under the limit bound next. */
const windowFits = (w: string) =>
  `(CASE WHEN ${running(w)} THEN w.${w}_used ELSE 0 END) + excluded.${w}_used <= ?`;

/**
 * The upsert of addToWindows for these windows, all of one category: the account, the time, each
 * window's end and amount, then each window's limit twice (the insert's condition, the update's).
 * The category, units and windows written into it are the domain's own (slotsKey, computed first,
 * refuses others); as literals they spare binding a string.
 */
function windowsUpsertSql(incs: UsageCommit['increments']): string {
  const category = incs[0]!.category;
  if (incs.some((i) => i.category !== category)) throw new Error('a consumption is of one category');
  const ws = incs.map(columnOf);
  const n = ws.length;
  // VALUES' columns: 1 the account, 2 the time, 3 + 2k and 4 + 2k window k's end and amount,
  // 3 + 2n + k window k's limit.
  const values = ['?', '?', ...ws.flatMap(() => ['?', '?']), ...ws.map(() => '?')].join(', ');
  return `INSERT INTO fair_use AS w (account_id, category, ${ws.map((w) => `${w}_start, ${w}_end, ${w}_used`).join(', ')})
       SELECT column1, '${category}', ${ws.map((_, k) => `column2, column${3 + 2 * k}, column${4 + 2 * k}`).join(', ')}
       FROM (VALUES (${values}))
       WHERE ${ws.map((_, k) => `column${4 + 2 * k} <= column${3 + 2 * n + k}`).join(' AND ')}
       ON CONFLICT (account_id, category) DO UPDATE SET
         ${ws.map(windowUpdate).join(',\n         ')}
       WHERE ${ws.map(windowFits).join(' AND ')}`;
}

/** The order windowsOf reads them in: by category (the row's key), then as in WINDOW_COLUMNS. */
function byWindowKey(a: WindowSlot, b: WindowSlot): number {
  if (a.category !== b.category) return a.category < b.category ? -1 : 1;
  if (a.unit !== b.unit) return a.unit < b.unit ? -1 : 1;
  return a.window < b.window ? -1 : a.window > b.window ? 1 : 0;
}
