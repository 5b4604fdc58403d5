/**
 * @module The embedded SQLite store (better-sqlite3): the Store contract's reads and writes of
 * plans, accounts, keys, users, the ledger and the audit trail. WAL journal: a write is answered
 * only once it is on disk, so it survives a crash of the process and of the machine (executor.ts,
 * wal-sync.ts). Writes run in BEGIN IMMEDIATE transactions, so concurrent processes on one file
 * serialise on the write lock; consumptions are committed in groups (group-commit.ts).
 */
import type { Account } from '../../domain/accounts.js';
import type { ApiKeyRecord } from '../../domain/api-keys.js';
import type { AuditEntry } from '../../domain/audit.js';
import type { EpochSeconds } from '../../domain/clock.js';
import type { LedgerEntry } from '../../domain/ledger.js';
import type { Plan } from '../../domain/plans.js';
import type { User } from '../../domain/users.js';
import { statusChanged } from '../../domain/webhooks.js';
import type { Change } from '../changes.js';
import { type AccountRow, boolToInt, type PlanRow, toAccount, toPlan } from '../rows.js';
import type {
  AccountPatch,
  AccountSnapshot,
  AuditQuery,
  KeyEntry,
  LedgerAppend,
  LedgerOutcome,
  Page,
  Store,
  UsageCommit,
  UsageOutcome,
} from '../store.js';
import { SqliteApiKeys } from './api-keys.js';
import { listAudit, writeAudit } from './audit.js';
import { SqliteCatalogue } from './catalogue.js';
import type { Checkpointer } from './checkpointer.js';
import { SqliteConsole } from './console.js';
import { makePrivate } from './driver.js';
import { type ExecutorOptions, SqliteExecutor } from './executor.js';
import { FairUseSql } from './fair-use-sql.js';
import { GroupCommit } from './group-commit.js';
import { appendLedger, applyLedger, listLedger } from './ledger.js';
import { SqliteOAuth } from './oauth.js';
import { insertPlan, migrate } from './schema.js';
import { SqliteUsageHistory } from './usage-history.js';
import { SqliteUsers } from './users.js';
import type { WalSync } from './wal-sync.js';
import { recordEvents, SqliteWebhooks } from './webhooks.js';

export type SqliteStoreOptions = ExecutorOptions;

export class SqliteStore implements Store {
  readonly backend = 'sqlite' as const;
  private readonly x: SqliteExecutor;
  private readonly windows: FairUseSql;
  private readonly groupCommit: GroupCommit;
  private readonly users: SqliteUsers;
  private readonly keys: SqliteApiKeys;
  readonly catalogue: SqliteCatalogue;
  readonly usageHistory: SqliteUsageHistory;
  readonly webhooks: SqliteWebhooks;
  readonly oauth: SqliteOAuth;
  readonly console: SqliteConsole;

  constructor(options: SqliteStoreOptions) {
    makePrivate(options.path);
    this.x = new SqliteExecutor(options);
    this.catalogue = new SqliteCatalogue(this.x);
    this.usageHistory = new SqliteUsageHistory(this.x);
    this.webhooks = new SqliteWebhooks(this.x);
    this.oauth = new SqliteOAuth(this.x);
    this.console = new SqliteConsole(this.x);
    this.users = new SqliteUsers(this.x);
    this.keys = new SqliteApiKeys(this.x);
    this.windows = new FairUseSql(this.x);
    this.groupCommit = new GroupCommit(this.x, this.windows);
  }

  migrate(plans: readonly Plan[], now: EpochSeconds): Promise<{ applied: string[] }> {
    return migrate(this.x, plans, now);
  }

  /** fdatasyncs of the WAL done so far, each making the commits before it durable (diagnostics). */
  get walSyncs(): number {
    return this.x.walSync?.syncs ?? 0;
  }

  /** The WAL's fdatasyncs, for tests that hold one to see what waits for it. */
  get walSync(): WalSync | undefined {
    return this.x.walSync;
  }

  /** The background checkpoints of a serving process (diagnostics and tests). */
  get checkpointer(): Checkpointer | undefined {
    return this.x.checkpointer;
  }

  inSync(): boolean {
    return this.x.inSync();
  }

  ping(): Promise<void> {
    return this.x.ping();
  }

  ready(): Promise<void> {
    return this.x.ready();
  }

  close(): Promise<void> {
    return this.x.close();
  }

  async listPlans(): Promise<Plan[]> {
    return this.x.attempt(() =>
      (
        this.x.sql('SELECT id, unlimited, limits, subscription FROM plans ORDER BY id').all() as PlanRow[]
      ).map(toPlan),
    );
  }

  async getPlan(id: string): Promise<Plan | undefined> {
    const row = await this.x.attempt(
      () =>
        this.x.sql('SELECT id, unlimited, limits, subscription FROM plans WHERE id = ?').get(id) as
          | PlanRow
          | undefined,
    );
    return row && toPlan(row);
  }

  async putPlan(plan: Plan, now: EpochSeconds, audit?: AuditEntry): Promise<void> {
    await this.x.writeTx(
      () => {
        insertPlan(this.x, plan, now);
        writeAudit(this.x, audit);
      },
      () => ['all'],
    );
  }

  async createAccount(account: Account, openingGrant?: LedgerAppend, audit?: AuditEntry): Promise<void> {
    await this.insertAccount(account, openingGrant, audit, false);
  }

  createFirstAccount(account: Account, openingGrant?: LedgerAppend, audit?: AuditEntry): Promise<boolean> {
    return this.insertAccount(account, openingGrant, audit, true);
  }

  private insertAccount(
    account: Account,
    openingGrant: LedgerAppend | undefined,
    audit: AuditEntry | undefined,
    onlyFirst: boolean,
  ): Promise<boolean> {
    // BEGIN IMMEDIATE: every process's writes wait for this one, so the look and the insert are one step.
    return this.x.writeTx(
      () => {
        if (onlyFirst && this.x.sql('SELECT 1 FROM accounts LIMIT 1').get()) return false;
        this.x
          .sql(
            `INSERT INTO accounts (id, name, plan_id, status, unlimited_override, token_balance, created_at, updated_at, plan_since)
             VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?)`,
          )
          .run(
            account.id,
            account.name,
            account.planId,
            account.status,
            boolToInt(account.unlimitedOverride),
            account.createdAt,
            account.updatedAt,
            account.planSince,
          );
        if (openingGrant) {
          const outcome = applyLedger(this.x, openingGrant);
          if (outcome.kind !== 'applied') throw new Error(`Opening grant not applied: ${outcome.kind}`);
        }
        writeAudit(this.x, audit);
        return true;
      },
      (created) => (created === false ? [] : [{ account: account.id }]),
    );
  }

  async getAccount(id: string): Promise<Account | undefined> {
    const row = await this.x.attempt(
      () => this.x.sql('SELECT * FROM accounts WHERE id = ?').get(id) as AccountRow | undefined,
    );
    return row && toAccount(row);
  }

  async listAccounts(page: Page): Promise<Account[]> {
    const rows = await this.x.attempt(
      () =>
        this.x
          .sql('SELECT * FROM accounts WHERE id > ? ORDER BY id LIMIT ?')
          .all(page.after ?? '', page.limit) as AccountRow[],
    );
    return rows.map(toAccount);
  }

  async countAccounts(): Promise<number> {
    return this.x.attempt(() => (this.x.sql('SELECT count(*) AS n FROM accounts').get() as { n: number }).n);
  }

  async updateAccount(
    id: string,
    patch: AccountPatch,
    now: EpochSeconds,
    audit?: AuditEntry,
  ): Promise<Account | undefined> {
    return this.x.writeTx(
      () => {
        const previous = patch.status
          ? (this.x.sql('SELECT status FROM accounts WHERE id = ?').get(id) as { status: string } | undefined)
          : undefined;
        const row = this.x
          .sql(
            `UPDATE accounts SET
               name = coalesce(?, name),
               plan_since = CASE WHEN coalesce(?, plan_id) <> plan_id THEN ? ELSE plan_since END,
               plan_id = coalesce(?, plan_id),
               status = coalesce(?, status),
               unlimited_override = CASE WHEN ? THEN ? ELSE unlimited_override END,
               low_balance = CASE WHEN ? THEN ? ELSE low_balance END,
               updated_at = ?
             WHERE id = ? RETURNING *`,
          )
          .get(
            patch.name ?? null,
            patch.planId ?? null,
            now,
            patch.planId ?? null,
            patch.status ?? null,
            patch.unlimitedOverride !== undefined ? 1 : 0,
            boolToInt(patch.unlimitedOverride ?? null),
            patch.lowBalance !== undefined ? 1 : 0,
            patch.lowBalance ?? null,
            now,
            id,
          ) as AccountRow | undefined;
        if (row && patch.status === 'closed') {
          this.x
            .sql('UPDATE api_keys SET revoked_at = ? WHERE account_id = ? AND revoked_at IS NULL')
            .run(now, id);
        }
        if (row) writeAudit(this.x, audit);
        if (row && previous && previous.status !== row.status)
          recordEvents(this.x, [statusChanged(row.id, now, previous.status, row.status)]);
        return row && toAccount(row);
      },
      (): Change[] => (patch.status === 'closed' ? [{ account: id }, 'keys'] : [{ account: id }]),
    );
  }

  createApiKey(key: ApiKeyRecord, digest: string, audit?: AuditEntry): Promise<void> {
    return this.keys.create(key, digest, audit);
  }
  getApiKey(id: string): Promise<ApiKeyRecord | undefined> {
    return this.keys.get(id);
  }
  listApiKeys(accountId: string): Promise<ApiKeyRecord[]> {
    return this.keys.list(accountId);
  }
  revokeApiKey(id: string, now: EpochSeconds, audit?: AuditEntry): Promise<ApiKeyRecord | undefined> {
    return this.keys.revoke(id, now, audit);
  }
  rehashApiKey(id: string, oldDigest: string, newDigest: string): Promise<void> {
    return this.keys.rehash(id, oldDigest, newDigest);
  }
  touchApiKeys(entries: readonly { id: string; at: EpochSeconds }[]): Promise<void> {
    return this.keys.touch(entries);
  }
  findActiveKey(digest: string): Promise<KeyEntry | undefined> {
    return this.keys.findActive(digest);
  }

  addUser(user: User, audit?: AuditEntry): Promise<'added' | 'duplicate'> {
    return this.users.add(user, audit);
  }

  getUser(id: string): Promise<User | undefined> {
    return this.users.get(id);
  }

  listUsers(accountId: string): Promise<User[]> {
    return this.users.list(accountId);
  }

  removeUser(id: string, audit?: AuditEntry): Promise<User | undefined> {
    return this.users.remove(id, audit);
  }

  getSnapshot(accountId: string): Promise<AccountSnapshot | undefined> {
    return this.x.attempt(() => {
      const row = this.x
        .sql(
          `SELECT a.*, p.unlimited AS plan_unlimited, p.limits AS plan_limits, p.subscription AS plan_subscription,
           (SELECT count(*) FROM api_keys k WHERE k.account_id = a.id AND k.revoked_at IS NULL) AS api_key_count,
           (SELECT count(*) FROM users u WHERE u.account_id = a.id) AS user_count
         FROM accounts a JOIN plans p ON p.id = a.plan_id WHERE a.id = ?`,
        )
        .get(accountId) as
        | (AccountRow & {
            plan_unlimited: number;
            plan_limits: string;
            plan_subscription: string | null;
            api_key_count: number;
            user_count: number;
          })
        | undefined;
      if (!row) return undefined;
      return {
        account: toAccount(row),
        plan: toPlan({
          id: row.plan_id,
          unlimited: row.plan_unlimited,
          limits: row.plan_limits,
          subscription: row.plan_subscription,
        }),
        apiKeyCount: row.api_key_count,
        userCount: row.user_count,
        windows: this.windows.windowsOf(accountId),
      };
    });
  }

  appendLedger(entry: LedgerAppend, audit?: AuditEntry): Promise<LedgerOutcome> {
    return appendLedger(this.x, entry, audit);
  }

  listLedger(accountId: string, page: Page): Promise<LedgerEntry[]> {
    return listLedger(this.x, accountId, page);
  }

  listAudit(q: AuditQuery): Promise<AuditEntry[]> {
    return listAudit(this.x, q);
  }

  /** Consumptions are committed in groups (group-commit.ts). */
  commitUsage(c: UsageCommit, audit?: AuditEntry): Promise<UsageOutcome> {
    return this.groupCommit.commit(c, audit);
  }
}
