/**
 * @module The PostgreSQL store (pg, one pool per process) for many stateless servers on one
 * database. Every write is one transaction under READ COMMITTED; consumption and charges are
 * conditional statements that PostgreSQL re-evaluates on the locked row, so they stay exact
 * across servers. Idempotency keys are serialised with a transaction-scoped advisory lock.
 */
import type { Account } from '../../domain/accounts.js';
import { type ApiKeyRecord, LAST_USED_RESOLUTION_SECONDS } from '../../domain/api-keys.js';
import type { AuditEntry } from '../../domain/audit.js';
import type { EpochSeconds } from '../../domain/clock.js';
import { type StoredWindow, windowsFromStored } from '../../domain/fair-use-order.js';
import type { LedgerEntry } from '../../domain/ledger.js';
import type { Plan } from '../../domain/plans.js';
import type { User } from '../../domain/users.js';
import { changeEvent, keyCreated, statusChanged } from '../../domain/webhooks.js';
import type { Change } from '../changes.js';
import { type AccountRow, type KeyRow, type PlanRow, toAccount, toKey, toPlan } from '../rows.js';
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
import { insertAccount } from './accounts.js';
import { listAudit, writeAudit } from './audit.js';
import { PgCatalogue } from './catalogue.js';
import { ChangeFeed } from './change-feed.js';
import { PgConsole } from './console.js';
import { PgGroupCommit } from './consumption.js';
import { createPool, guard, type PgPool, type PostgresOptions, quoteIdent } from './driver.js';
import { appendLedger, listLedger } from './ledger.js';
import { PgOAuth } from './oauth.js';
import { insertPlan, migrate } from './schema.js';
import { PgTransactions } from './transactions.js';
import { PgUsageHistory } from './usage-history.js';
import { PgUsers } from './users.js';
import { PgWebhooks, recordEvents } from './webhooks.js';

/** SQLSTATE foreign_key_violation: a window for an account that does not exist. */
const _FOREIGN_KEY_VIOLATION = '23503';
const KEY_COLUMNS = 'id, account_id, name, hint, created_at, revoked_at, last_used_at';

export class PostgresStore implements Store {
  readonly backend = 'postgres' as const;
  private readonly pool: PgPool;
  private readonly schema: string;
  private readonly feed: ChangeFeed;
  private readonly t: PgTransactions;
  readonly catalogue: PgCatalogue;
  readonly usageHistory: PgUsageHistory;
  readonly webhooks: PgWebhooks;
  readonly oauth: PgOAuth;
  readonly console: PgConsole;
  private readonly users: PgUsers;
  private readonly consumptions: PgGroupCommit;

  constructor(options: PostgresOptions) {
    this.schema = options.schema ?? 'public';
    quoteIdent(this.schema);
    this.pool = createPool(options);
    // Every process on the database notifies its writes; one without an observer is not waited for.
    this.feed = new ChangeFeed({
      url: options.url,
      channel: `toolgate_${this.schema}`.slice(0, 63),
      connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
      observer: options.observer,
      warn: options.warn,
    });
    void this.feed.start();
    this.t = new PgTransactions(this.pool, this.feed, options.observer, options.warn);
    this.catalogue = new PgCatalogue(this.t);
    this.usageHistory = new PgUsageHistory(this.t);
    this.webhooks = new PgWebhooks(this.t);
    this.oauth = new PgOAuth(this.t);
    this.console = new PgConsole(this.t);
    this.users = new PgUsers(this.t);
    this.consumptions = new PgGroupCommit(this.t);
  }

  /** In sync only while the change feed is proven alive. */
  inSync(): boolean {
    return this.feed.healthy();
  }

  async migrate(plans: readonly Plan[], now: EpochSeconds): Promise<{ applied: string[] }> {
    await guard(() => this.pool.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(this.schema)}`)).catch(
      (err: { code?: string }) => {
        // IF NOT EXISTS does not hold between two servers creating it at the same moment: the
        // slower one meets the catalogue's unique index (23505) or the schema itself (42P06).
        if (err.code !== '23505' && err.code !== '42P06') throw err;
      },
    );
    return migrate(this.t, plans, now);
  }

  async ping(): Promise<void> {
    await guard(() => this.pool.query('SELECT 1'));
  }

  /**
   * A ping while writes go through. Once one was refused as unavailable, a probe write instead: a
   * row rewritten as it is (a new row version in the table and the WAL, like any small write).
   */
  async ready(): Promise<void> {
    if (!this.t.refusal) return this.ping();
    await guard(() =>
      this.pool.query('UPDATE schema_migrations SET applied_at = applied_at WHERE version = 1'),
    );
    this.t.refusal = undefined;
  }

  async close(): Promise<void> {
    await this.feed.stop();
    await this.pool.end().catch(() => {});
  }

  /** Drops this store's schema and everything in it: for scratch schemas in tests. */
  async dropSchema(): Promise<void> {
    if (this.schema === 'public') throw new Error('Refusing to drop the public schema.');
    await this.pool.query(`DROP SCHEMA IF EXISTS ${quoteIdent(this.schema)} CASCADE`);
  }

  async listPlans(): Promise<Plan[]> {
    return guard(async () =>
      (
        await this.t.all<PlanRow>(
          'SELECT id, unlimited, limits::text AS limits, subscription FROM plans ORDER BY id',
        )
      ).map(toPlan),
    );
  }

  async getPlan(id: string): Promise<Plan | undefined> {
    const row = await guard(() =>
      this.t.one<PlanRow>(
        'SELECT id, unlimited, limits::text AS limits, subscription FROM plans WHERE id = $1',
        [id],
      ),
    );
    return row && toPlan(row);
  }

  async putPlan(plan: Plan, now: EpochSeconds, audit?: AuditEntry): Promise<void> {
    await this.t.tx(
      async (db) => {
        await insertPlan(plan, now, db);
        await writeAudit(audit, db);
      },
      () => ['all'],
    );
  }

  async createAccount(account: Account, openingGrant?: LedgerAppend, audit?: AuditEntry): Promise<void> {
    await insertAccount(this.t, account, openingGrant, audit, false);
  }

  createFirstAccount(account: Account, openingGrant?: LedgerAppend, audit?: AuditEntry): Promise<boolean> {
    return insertAccount(this.t, account, openingGrant, audit, true);
  }

  async getAccount(id: string): Promise<Account | undefined> {
    const row = await guard(() => this.t.one<AccountRow>('SELECT * FROM accounts WHERE id = $1', [id]));
    return row && toAccount(row);
  }

  async listAccounts(page: Page): Promise<Account[]> {
    const rows = await guard(() =>
      this.t.all<AccountRow>('SELECT * FROM accounts WHERE id > $1 ORDER BY id LIMIT $2', [
        page.after ?? '',
        page.limit,
      ]),
    );
    return rows.map(toAccount);
  }

  async countAccounts(): Promise<number> {
    return guard(async () => (await this.t.one<{ n: number }>('SELECT count(*) AS n FROM accounts'))!.n);
  }

  async updateAccount(
    id: string,
    patch: AccountPatch,
    now: EpochSeconds,
    audit?: AuditEntry,
  ): Promise<Account | undefined> {
    return this.t.tx(
      async (db) => {
        // The status before, read under the row's lock: an event only for a change that happened.
        const row = await this.t.one<AccountRow & { previous_status: string }>(
          `WITH before AS (SELECT status FROM accounts WHERE id = $7 FOR UPDATE)
           UPDATE accounts SET
           name = coalesce($1, name),
           plan_since = CASE WHEN coalesce($2, plan_id) <> plan_id THEN $6 ELSE plan_since END,
           plan_id = coalesce($2, plan_id),
           status = coalesce($3, accounts.status),
           unlimited_override = CASE WHEN $4::boolean THEN $5::boolean ELSE unlimited_override END,
           low_balance = CASE WHEN $8::boolean THEN $9::bigint ELSE low_balance END,
           updated_at = $6
         FROM before WHERE id = $7 RETURNING accounts.*, before.status AS previous_status`,
          [
            patch.name ?? null,
            patch.planId ?? null,
            patch.status ?? null,
            patch.unlimitedOverride !== undefined,
            patch.unlimitedOverride ?? null,
            now,
            id,
            patch.lowBalance !== undefined,
            patch.lowBalance ?? null,
          ],
          db,
        );
        if (row && patch.status === 'closed') {
          await db.query('UPDATE api_keys SET revoked_at = $1 WHERE account_id = $2 AND revoked_at IS NULL', [
            now,
            id,
          ]);
        }
        if (row) await writeAudit(audit, db);
        if (row && row.previous_status !== row.status)
          await recordEvents([statusChanged(id, now, row.previous_status, row.status)], db);
        return row && toAccount(row);
      },
      (): Change[] => (patch.status === 'closed' ? [{ account: id }, 'keys'] : [{ account: id }]),
    );
  }

  async createApiKey(key: ApiKeyRecord, digest: string, audit?: AuditEntry): Promise<void> {
    await this.t.tx(
      async (db) => {
        await db.query(
          `INSERT INTO api_keys (id, account_id, name, digest, hint, created_at, revoked_at, last_used_at)
         VALUES ($1, $2, $3, $4, $5, $6, NULL, NULL)`,
          [key.id, key.accountId, key.name, digest, key.hint, key.createdAt],
        );
        await writeAudit(audit, db);
        await recordEvents([keyCreated(key)], db);
      },
      () => [{ account: key.accountId }],
    );
  }

  async getApiKey(id: string): Promise<ApiKeyRecord | undefined> {
    const row = await guard(() =>
      this.t.one<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1`, [id]),
    );
    return row && toKey(row);
  }

  async listApiKeys(accountId: string): Promise<ApiKeyRecord[]> {
    const rows = await guard(() =>
      this.t.all<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = $1 ORDER BY id`, [
        accountId,
      ]),
    );
    return rows.map(toKey);
  }

  async revokeApiKey(id: string, now: EpochSeconds, audit?: AuditEntry): Promise<ApiKeyRecord | undefined> {
    await this.t.tx(
      async (db) => {
        const revoked = await this.t.one<{ account_id: string }>(
          'UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING account_id',
          [now, id],
          db,
        );
        if (revoked) {
          await writeAudit(audit, db);
          await recordEvents([changeEvent('key.revoked', revoked.account_id, now, { key_id: id })], db);
        }
        return revoked?.account_id;
      },
      (accountId): Change[] => (accountId ? ['keys', { account: accountId }] : []),
    );
    return this.getApiKey(id);
  }

  async rehashApiKey(id: string, oldDigest: string, newDigest: string): Promise<void> {
    await this.t.tx(
      (db) =>
        db.query('UPDATE api_keys SET digest = $1 WHERE id = $2 AND digest = $3', [newDigest, id, oldDigest]),
      () => ['keys'],
    );
  }

  async touchApiKeys(entries: readonly { id: string; at: EpochSeconds }[]): Promise<void> {
    if (entries.length === 0) return;
    await guard(() =>
      this.pool.query(
        `UPDATE api_keys k SET last_used_at = v.at
         FROM unnest($1::text[], $2::bigint[]) AS v (id, at)
         WHERE k.id = v.id AND (k.last_used_at IS NULL OR k.last_used_at <= v.at - $3::bigint)`,
        [entries.map((e) => e.id), entries.map((e) => e.at), LAST_USED_RESOLUTION_SECONDS],
      ),
    );
  }

  async findActiveKey(digest: string): Promise<KeyEntry | undefined> {
    const row = await guard(() =>
      this.t.one<{ id: string; account_id: string }>(
        {
          name: 'tg_find_key',
          text: 'SELECT id, account_id FROM api_keys WHERE digest = $1 AND revoked_at IS NULL',
        },
        [digest],
      ),
    );
    return row && { keyId: row.id, accountId: row.account_id };
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

  async getSnapshot(accountId: string): Promise<AccountSnapshot | undefined> {
    // One round trip: the account (its windows with it), its plan and both counts.
    const row = await guard(() =>
      this.t.one<
        AccountRow & {
          plan_unlimited: boolean;
          plan_limits: PlanRow['limits'];
          plan_subscription: string | null;
          api_key_count: number;
          user_count: number;
          fair_use: Record<string, StoredWindow[]>;
        }
      >(
        {
          name: 'tg_snapshot',
          text: `SELECT a.*, p.unlimited AS plan_unlimited, p.limits::text AS plan_limits, p.subscription AS plan_subscription,
           (SELECT count(*) FROM api_keys k WHERE k.account_id = a.id AND k.revoked_at IS NULL) AS api_key_count,
           (SELECT count(*) FROM users u WHERE u.account_id = a.id) AS user_count
         FROM accounts a JOIN plans p ON p.id = a.plan_id WHERE a.id = $1`,
        },
        [accountId],
      ),
    );
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
      windows: windowsFromStored(row.fair_use),
    };
  }

  appendLedger(entry: LedgerAppend, audit?: AuditEntry): Promise<LedgerOutcome> {
    return appendLedger(this.t, entry, audit);
  }

  listLedger(accountId: string, page: Page): Promise<LedgerEntry[]> {
    return listLedger(this.t, accountId, page);
  }

  commitUsage(c: UsageCommit, audit?: AuditEntry): Promise<UsageOutcome> {
    return this.consumptions.commit(c, audit);
  }

  listAudit(q: AuditQuery): Promise<AuditEntry[]> {
    return listAudit(this.t, q);
  }
}
