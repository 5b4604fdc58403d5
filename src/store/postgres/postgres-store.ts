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
import { exceededBy, sameSlot, type WindowState } from '../../domain/fair-use.js';
import { type LedgerEntry, ledgerDelta, replayOrConflict } from '../../domain/ledger.js';
import type { Plan } from '../../domain/plans.js';
import type { User } from '../../domain/users.js';
import { type Change, report } from '../changes.js';
import { MIGRATIONS, migrationLabel } from '../migrations/index.js';
import { Rollback } from '../rollback.js';
import {
  type AccountRow,
  type AuditRow,
  type KeyRow,
  type LedgerRow,
  type PlanRow,
  toAccount,
  toAudit,
  toKey,
  toLedger,
  toPlan,
  toUser,
  toWindow,
  type UserRow,
  type WindowRow,
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
import { ChangeFeed, type Ticket } from './change-feed.js';
import {
  createPool,
  guard,
  isUnavailable,
  type PgClient,
  type PgPool,
  type PgQueryable,
  type PostgresOptions,
  quoteIdent,
  quoteLiteral,
} from './driver.js';

const MIGRATION_LOCK = 7_264_001;
/** SQLSTATE foreign_key_violation: a window for an account that does not exist. */
const FOREIGN_KEY_VIOLATION = '23503';
const KEY_COLUMNS = 'id, account_id, name, hint, created_at, revoked_at, last_used_at';

export class PostgresStore implements Store {
  readonly backend = 'postgres' as const;
  private readonly pool: PgPool;
  private readonly schema: string;
  private readonly feed: ChangeFeed;
  private readonly observer: PostgresOptions['observer'];

  constructor(options: PostgresOptions) {
    this.schema = options.schema ?? 'public';
    quoteIdent(this.schema);
    this.pool = createPool(options);
    // Every process on the database notifies its writes; one without an observer is not waited for.
    this.observer = options.observer;
    this.feed = new ChangeFeed({
      url: options.url,
      channel: `toolgate_${this.schema}`.slice(0, 63),
      connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
      observer: options.observer,
      warn: options.warn,
    });
    void this.feed.start();
  }

  /** In sync only while the change feed is proven alive. */
  inSync(): boolean {
    return this.feed.healthy();
  }

  /** The first row of all(), or undefined. */
  private async one<R>(
    text: string | { name: string; text: string },
    values: unknown[] = [],
    db: PgQueryable = this.pool,
  ): Promise<R | undefined> {
    return (await this.all<R>(text, values, db))[0];
  }

  /** `text` may be named, `{ name, text }`: prepared once per connection, for the hot statements. */
  private async all<R>(
    text: string | { name: string; text: string },
    values: unknown[] = [],
    db: PgQueryable = this.pool,
  ): Promise<R[]> {
    return (
      typeof text === 'string' ? await db.query<R>(text, values) : await db.query<R>({ ...text, values })
    ).rows;
  }

  /**
   * BEGIN … COMMIT on one pooled connection; ROLLBACK on any throw (a Rollback is an answer, not an
   * error). `changes` names what the write touched: this server's cache forgets it right after the
   * commit, and the others are notified in the same transaction; the write returns once every live
   * server has applied it, so the next request anywhere sees it.
   */
  private async tx<T>(fn: (db: PgClient) => Promise<T>, changes?: (result: T) => Change[]): Promise<T> {
    let touched: Change[] = [];
    let ticket: Ticket | undefined;
    let result: T;
    try {
      result = await this.txRun(fn, (result) => {
        touched = changes?.(result) ?? [];
        if (touched.length === 0) return undefined;
        ticket = this.feed.ticket(touched);
        return `SELECT pg_notify(${quoteLiteral(this.feed.channel)}, ${quoteLiteral(ticket.payload)})`;
      });
    } catch (err) {
      ticket?.cancel();
      throw err;
    } finally {
      report(this.observer, touched);
    }
    await ticket?.settle();
    return result;
  }

  /**
   * `lastly`, if it gives a statement, is sent with the COMMIT in one round trip (the simple query
   * protocol takes several statements, without parameters); should it fail, the COMMIT is not run
   * and the transaction rolls back like on any other error.
   */
  private async txRun<T>(
    fn: (db: PgClient) => Promise<T>,
    lastly?: (result: T) => string | undefined,
  ): Promise<T> {
    return guard(async () => {
      const client = await this.pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const result = await fn(client);
        const last = lastly?.(result);
        await client.query(last === undefined ? 'COMMIT' : `${last}; COMMIT`);
        return result;
      } catch (err) {
        if (isUnavailable(err)) {
          // The connection is gone or stalled: the server rolls back when it drops; don't wait on it twice.
          broken = err as Error;
        } else {
          try {
            await client.query('ROLLBACK');
          } catch (rollbackErr) {
            broken = rollbackErr as Error;
          }
        }
        throw err;
      } finally {
        // A connection that failed to roll back is not given to anyone else.
        client.release(broken ?? false);
      }
    });
  }

  private async answer<T extends UsageOutcome | LedgerOutcome>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof Rollback) return err.outcome as T;
      throw err;
    }
  }

  async migrate(plans: readonly Plan[], now: EpochSeconds): Promise<{ applied: string[] }> {
    await guard(() => this.pool.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(this.schema)}`));
    let changed = false;
    return this.tx(
      async (db) => {
        // Several servers starting at once: one migrates, the others wait and find nothing to do.
        await db.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
        await db.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`);
        const done = new Set(
          (await this.all<{ version: number }>('SELECT version FROM schema_migrations', [], db)).map(
            (r) => r.version,
          ),
        );
        const applied: string[] = [];
        for (const m of MIGRATIONS) {
          if (done.has(m.version)) continue;
          if (m.postgres !== null) await db.query(m.postgres);
          await db.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
            m.version,
            m.name,
            now,
          ]);
          applied.push(migrationLabel(m));
        }
        const { n } = (await this.one<{ n: number }>('SELECT count(*) AS n FROM plans', [], db))!;
        if (n === 0) for (const p of plans) await this.insertPlan(p, now, db);
        changed = applied.length > 0 || n === 0;
        return { applied };
      },
      // Every start (a server's, each CLI command's) migrates: only one that changed something
      // makes the servers forget their caches.
      () => (changed ? ['all'] : []),
    );
  }

  async ping(): Promise<void> {
    await guard(() => this.pool.query('SELECT 1'));
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
      (await this.all<PlanRow>('SELECT id, unlimited, limits FROM plans ORDER BY id')).map(toPlan),
    );
  }

  async getPlan(id: string): Promise<Plan | undefined> {
    const row = await guard(() =>
      this.one<PlanRow>('SELECT id, unlimited, limits FROM plans WHERE id = $1', [id]),
    );
    return row && toPlan(row);
  }

  async putPlan(plan: Plan, now: EpochSeconds, audit?: AuditEntry): Promise<void> {
    await this.tx(
      async (db) => {
        await this.insertPlan(plan, now, db);
        await this.writeAudit(audit, db);
      },
      () => ['all'],
    );
  }

  private async insertPlan(plan: Plan, now: EpochSeconds, db: PgQueryable): Promise<void> {
    await db.query(
      `INSERT INTO plans (id, unlimited, limits, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)
       ON CONFLICT (id) DO UPDATE SET unlimited = excluded.unlimited, limits = excluded.limits,
         updated_at = excluded.updated_at`,
      [plan.id, plan.unlimited, JSON.stringify(plan.limits), now],
    );
  }

  async createAccount(account: Account, openingGrant?: LedgerAppend, audit?: AuditEntry): Promise<void> {
    await this.tx(
      async (db) => {
        await db.query(
          `INSERT INTO accounts (id, name, plan_id, status, unlimited_override, token_balance, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, 0, $6, $7)`,
          [
            account.id,
            account.name,
            account.planId,
            account.status,
            account.unlimitedOverride,
            account.createdAt,
            account.updatedAt,
          ],
        );
        if (openingGrant) {
          const outcome = await this.applyLedger(openingGrant, db);
          if (outcome.kind !== 'applied') throw new Error(`Opening grant not applied: ${outcome.kind}`);
        }
        await this.writeAudit(audit, db);
      },
      () => [{ account: account.id }],
    );
  }

  async getAccount(id: string): Promise<Account | undefined> {
    const row = await guard(() => this.one<AccountRow>('SELECT * FROM accounts WHERE id = $1', [id]));
    return row && toAccount(row);
  }

  async listAccounts(page: Page): Promise<Account[]> {
    const rows = await guard(() =>
      this.all<AccountRow>('SELECT * FROM accounts WHERE id > $1 ORDER BY id LIMIT $2', [
        page.after ?? '',
        page.limit,
      ]),
    );
    return rows.map(toAccount);
  }

  async countAccounts(): Promise<number> {
    return guard(async () => (await this.one<{ n: number }>('SELECT count(*) AS n FROM accounts'))!.n);
  }

  async updateAccount(
    id: string,
    patch: AccountPatch,
    now: EpochSeconds,
    audit?: AuditEntry,
  ): Promise<Account | undefined> {
    return this.tx(
      async (db) => {
        const row = await this.one<AccountRow>(
          `UPDATE accounts SET
           name = coalesce($1, name),
           plan_id = coalesce($2, plan_id),
           status = coalesce($3, status),
           unlimited_override = CASE WHEN $4::boolean THEN $5::boolean ELSE unlimited_override END,
           updated_at = $6
         WHERE id = $7 RETURNING *`,
          [
            patch.name ?? null,
            patch.planId ?? null,
            patch.status ?? null,
            patch.unlimitedOverride !== undefined,
            patch.unlimitedOverride ?? null,
            now,
            id,
          ],
          db,
        );
        if (row && patch.status === 'closed') {
          await db.query('UPDATE api_keys SET revoked_at = $1 WHERE account_id = $2 AND revoked_at IS NULL', [
            now,
            id,
          ]);
        }
        if (row) await this.writeAudit(audit, db);
        return row && toAccount(row);
      },
      (): Change[] => (patch.status === 'closed' ? [{ account: id }, 'keys'] : [{ account: id }]),
    );
  }

  async createApiKey(key: ApiKeyRecord, digest: string, audit?: AuditEntry): Promise<void> {
    await this.tx(
      async (db) => {
        await db.query(
          `INSERT INTO api_keys (id, account_id, name, digest, hint, created_at, revoked_at, last_used_at)
         VALUES ($1, $2, $3, $4, $5, $6, NULL, NULL)`,
          [key.id, key.accountId, key.name, digest, key.hint, key.createdAt],
        );
        await this.writeAudit(audit, db);
      },
      () => [{ account: key.accountId }],
    );
  }

  async getApiKey(id: string): Promise<ApiKeyRecord | undefined> {
    const row = await guard(() =>
      this.one<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1`, [id]),
    );
    return row && toKey(row);
  }

  async listApiKeys(accountId: string): Promise<ApiKeyRecord[]> {
    const rows = await guard(() =>
      this.all<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = $1 ORDER BY id`, [accountId]),
    );
    return rows.map(toKey);
  }

  async revokeApiKey(id: string, now: EpochSeconds, audit?: AuditEntry): Promise<ApiKeyRecord | undefined> {
    await this.tx(
      async (db) => {
        const revoked = await this.one<{ account_id: string }>(
          'UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING account_id',
          [now, id],
          db,
        );
        if (revoked) await this.writeAudit(audit, db);
        return revoked?.account_id;
      },
      (accountId): Change[] => (accountId ? ['keys', { account: accountId }] : []),
    );
    return this.getApiKey(id);
  }

  async rehashApiKey(id: string, oldDigest: string, newDigest: string): Promise<void> {
    await this.tx(
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
      this.one<{ id: string; account_id: string }>(
        {
          name: 'tg_find_key',
          text: 'SELECT id, account_id FROM api_keys WHERE digest = $1 AND revoked_at IS NULL',
        },
        [digest],
      ),
    );
    return row && { keyId: row.id, accountId: row.account_id };
  }

  async addUser(user: User, audit?: AuditEntry): Promise<'added' | 'duplicate'> {
    return this.tx(
      async (db) => {
        const { rowCount } = await db.query(
          `INSERT INTO users (id, account_id, email, role, created_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (account_id, email) DO NOTHING`,
          [user.id, user.accountId, user.email, user.role, user.createdAt],
        );
        if (rowCount !== 1) return 'duplicate';
        await this.writeAudit(audit, db);
        return 'added';
      },
      (outcome): Change[] => (outcome === 'added' ? [{ account: user.accountId }] : []),
    );
  }

  async getUser(id: string): Promise<User | undefined> {
    const row = await guard(() => this.one<UserRow>('SELECT * FROM users WHERE id = $1', [id]));
    return row && toUser(row);
  }

  async listUsers(accountId: string): Promise<User[]> {
    return guard(async () =>
      (await this.all<UserRow>('SELECT * FROM users WHERE account_id = $1 ORDER BY id', [accountId])).map(
        toUser,
      ),
    );
  }

  async removeUser(id: string, audit?: AuditEntry): Promise<User | undefined> {
    const row = await this.tx(
      async (db) => {
        const removed = await this.one<UserRow>('DELETE FROM users WHERE id = $1 RETURNING *', [id], db);
        if (removed) await this.writeAudit(audit, db);
        return removed;
      },
      (removed): Change[] => (removed ? [{ account: removed.account_id }] : []),
    );
    return row && toUser(row);
  }

  async getSnapshot(accountId: string): Promise<AccountSnapshot | undefined> {
    // One round trip: the account, its plan, both counts and its windows.
    const row = await guard(() =>
      this.one<
        AccountRow & {
          plan_unlimited: boolean;
          plan_limits: PlanRow['limits'];
          api_key_count: number;
          user_count: number;
          windows: WindowRow[];
        }
      >(
        {
          name: 'tg_snapshot',
          text: `SELECT a.*, p.unlimited AS plan_unlimited, p.limits AS plan_limits,
           (SELECT count(*) FROM api_keys k WHERE k.account_id = a.id AND k.revoked_at IS NULL) AS api_key_count,
           (SELECT count(*) FROM users u WHERE u.account_id = a.id) AS user_count,
           (SELECT coalesce(json_agg(json_build_object('category', w.category, 'unit', w.unit, 'win', w.win,
                      'started_at', w.started_at, 'ends_at', w.ends_at, 'used', w.used)), '[]'::json)
              FROM fair_use_windows w WHERE w.account_id = a.id) AS windows
         FROM accounts a JOIN plans p ON p.id = a.plan_id WHERE a.id = $1`,
        },
        [accountId],
      ),
    );
    if (!row) return undefined;
    return {
      account: toAccount(row),
      plan: toPlan({ id: row.plan_id, unlimited: row.plan_unlimited, limits: row.plan_limits }),
      apiKeyCount: row.api_key_count,
      userCount: row.user_count,
      windows: row.windows.map(toWindow),
    };
  }

  private async windowsOf(accountId: string, db: PgQueryable): Promise<WindowState[]> {
    return (
      await this.all<WindowRow>(
        {
          name: 'tg_windows_of',
          text: 'SELECT category, unit, win, started_at, ends_at, used FROM fair_use_windows WHERE account_id = $1',
        },
        [accountId],
        db,
      )
    ).map(toWindow);
  }

  /** Serialises every transaction that uses the same (account, idempotency key). */
  private async lockIdempotencyKey(
    db: PgQueryable,
    scope: string,
    accountId: string,
    key: string,
  ): Promise<void> {
    await db.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`${scope}:${accountId}:${key}`]);
  }

  async appendLedger(entry: LedgerAppend, audit?: AuditEntry): Promise<LedgerOutcome> {
    return this.answer(() =>
      this.tx(
        async (db) => {
          const outcome = await this.applyLedger(entry, db);
          if (outcome.kind === 'applied') await this.writeAudit(audit, db);
          return outcome;
        },
        (outcome): Change[] => (outcome.kind === 'applied' ? [{ account: entry.accountId }] : []),
      ),
    );
  }

  private async applyLedger(entry: LedgerAppend, db: PgQueryable): Promise<LedgerOutcome> {
    if (entry.idempotencyKey !== null) {
      await this.lockIdempotencyKey(db, 'ledger', entry.accountId, entry.idempotencyKey);
      const prior = await this.one<LedgerRow>(
        'SELECT * FROM token_ledger WHERE account_id = $1 AND idempotency_key = $2',
        [entry.accountId, entry.idempotencyKey],
        db,
      );
      if (prior) {
        return replayOrConflict(prior.request_hash, entry.requestHash, () => ({
          kind: 'replayed' as const,
          entry: toLedger(prior),
        }));
      }
    }
    const delta = ledgerDelta(entry.kind, entry.amount);
    // One conditional statement, re-checked by PostgreSQL on the locked row: the balance stays >= 0.
    const moved = await this.one<{ token_balance: number }>(
      'UPDATE accounts SET token_balance = token_balance + $1 WHERE id = $2 AND token_balance + $1 >= 0 RETURNING token_balance',
      [delta, entry.accountId],
      db,
    );
    if (!moved) {
      const acc = await this.one<{ token_balance: number }>(
        'SELECT token_balance FROM accounts WHERE id = $1',
        [entry.accountId],
        db,
      );
      throw new Rollback(acc ? { kind: 'insufficient', balance: acc.token_balance } : { kind: 'not_found' });
    }
    const row = (await this.one<LedgerRow>(
      `INSERT INTO token_ledger (id, account_id, kind, amount, delta, balance_after, reason, idempotency_key, request_hash, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING *`,
      [
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
      ],
      db,
    ))!;
    return { kind: 'applied', entry: toLedger(row) };
  }

  async listLedger(accountId: string, page: Page): Promise<LedgerEntry[]> {
    return guard(async () =>
      (
        await this.all<LedgerRow>(
          'SELECT * FROM token_ledger WHERE account_id = $1 AND id > $2 ORDER BY id LIMIT $3',
          [accountId, page.after ?? '', page.limit],
        )
      ).map(toLedger),
    );
  }

  async commitUsage(c: UsageCommit, audit?: AuditEntry): Promise<UsageOutcome> {
    return this.answer(() =>
      this.tx(
        async (db) => {
          const outcome = await this.consume(c, db);
          if (outcome.kind === 'committed') await this.writeAudit(audit, db);
          return outcome;
        },
        (outcome): Change[] => (outcome.kind === 'committed' ? [{ account: c.accountId }] : []),
      ),
    );
  }

  /**
   * A consumption's windows in one statement, one round trip: one conditional upsert for all of
   * them (each starts if it is not running and is added to if the amount fits; under READ
   * COMMITTED, ON CONFLICT DO UPDATE locks each row and evaluates WHERE on its latest version, the
   * rows always in the same order), with the account's other windows read beside it. Answers the
   * account's windows after it; throws a Rollback when a window refused or the account is unknown
   * (the windows' foreign key).
   */
  private async addToWindows(c: UsageCommit, db: PgQueryable): Promise<WindowState[]> {
    const incs = c.increments;
    let rows: (WindowRow & { touched: boolean })[];
    try {
      rows = await this.all<WindowRow & { touched: boolean }>(
        {
          name: 'tg_add_to_windows',
          text: `WITH v AS (
            SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $6::bigint[], $7::bigint[], $8::bigint[])
              AS v (category, unit, win, len, amount, lim)
          ), up AS (
            INSERT INTO fair_use_windows AS w (account_id, category, unit, win, started_at, ends_at, used)
            SELECT $1, category, unit, win, $5::bigint, $5::bigint + len, amount FROM v WHERE amount <= lim
            ON CONFLICT (account_id, category, unit, win) DO UPDATE SET
              used       = CASE WHEN w.ends_at <= $5::bigint THEN excluded.used ELSE w.used + excluded.used END,
              started_at = CASE WHEN w.ends_at <= $5::bigint THEN excluded.started_at ELSE w.started_at END,
              ends_at    = CASE WHEN w.ends_at <= $5::bigint THEN excluded.ends_at ELSE w.ends_at END
            WHERE (CASE WHEN w.ends_at <= $5::bigint THEN 0 ELSE w.used END) + excluded.used
              <= (SELECT lim FROM v WHERE v.category = excluded.category AND v.unit = excluded.unit AND v.win = excluded.win)
            RETURNING category, unit, win, started_at, ends_at, used
          )
          SELECT category, unit, win, started_at, ends_at, used, true AS touched FROM up
          UNION ALL
          SELECT category, unit, win, started_at, ends_at, used, false FROM fair_use_windows w
           WHERE w.account_id = $1
             AND NOT EXISTS (SELECT 1 FROM up WHERE up.category = w.category AND up.unit = w.unit AND up.win = w.win)`,
        },
        [
          c.accountId,
          incs.map((i) => i.category),
          incs.map((i) => i.unit),
          incs.map((i) => i.window),
          c.now,
          incs.map((i) => i.lengthSeconds),
          incs.map((i) => i.amount),
          incs.map((i) => i.limit),
        ],
        db,
      );
    } catch (err) {
      if ((err as { code?: string }).code === FOREIGN_KEY_VIOLATION)
        throw new Rollback({ kind: 'not_found' });
      throw err;
    }
    const windows = rows.map(toWindow);
    const refused = incs.find((inc) => !rows.some((r, i) => r.touched && sameSlot(windows[i]!, inc)));
    if (refused) {
      // Nothing was inserted when every amount alone is over its limit: the account may not exist.
      if (!(await this.one('SELECT 1 FROM accounts WHERE id = $1', [c.accountId], db)))
        throw new Rollback({ kind: 'not_found' });
      // Read again: the refusal saw the row's latest version, this statement's read an older one.
      const latest = await this.windowsOf(c.accountId, db);
      throw new Rollback({ kind: 'exceeded', exceeded: exceededBy(refused, latest, c.now) });
    }
    return windows;
  }

  private async consume(c: UsageCommit, db: PgQueryable): Promise<UsageOutcome> {
    if (c.idempotency) {
      await this.lockIdempotencyKey(db, 'usage', c.accountId, c.idempotency.key);
      // Kept as text, not JSONB: a replay answers byte for byte what was answered first.
      const prior = await this.one<{ request_hash: string; response: string }>(
        'SELECT request_hash, response FROM usage_idempotency WHERE account_id = $1 AND idempotency_key = $2',
        [c.accountId, c.idempotency.key],
        db,
      );
      if (prior) {
        return replayOrConflict(prior.request_hash, c.idempotency.requestHash, () => ({
          kind: 'replayed' as const,
          response: JSON.parse(prior.response),
        }));
      }
    }
    const windows = await this.addToWindows(c, db);
    let balanceAfter: number | null = null;
    if (c.charge) {
      const outcome = await this.applyLedger(chargeEntry(c, c.charge), db);
      if (outcome.kind !== 'applied') throw new Rollback(outcome as UsageOutcome);
      balanceAfter = outcome.entry.balanceAfter;
    }
    const response = c.render(windows, balanceAfter);
    if (c.idempotency) {
      await db.query(
        `INSERT INTO usage_idempotency (account_id, idempotency_key, request_hash, response, created_at)
         VALUES ($1, $2, $3, $4, $5)`,
        [c.accountId, c.idempotency.key, c.idempotency.requestHash, JSON.stringify(response), c.now],
      );
    }
    return { kind: 'committed', response };
  }

  /** Inside the transaction of the action it describes. */
  private async writeAudit(audit: AuditEntry | undefined, db: PgQueryable): Promise<void> {
    if (!audit) return;
    await db.query(
      `INSERT INTO audit_log (id, at, actor, action, account_id, target_id, details)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        audit.id,
        audit.at,
        audit.actor,
        audit.action,
        audit.accountId,
        audit.targetId,
        JSON.stringify(audit.details),
      ],
    );
  }

  async listAudit(q: AuditQuery): Promise<AuditEntry[]> {
    const rows = await guard(() =>
      q.accountId === undefined
        ? this.all<AuditRow>('SELECT * FROM audit_log WHERE id > $1 ORDER BY id LIMIT $2', [
            q.after ?? '',
            q.limit,
          ])
        : this.all<AuditRow>(
            'SELECT * FROM audit_log WHERE account_id = $1 AND id > $2 ORDER BY id LIMIT $3',
            [q.accountId, q.after ?? '', q.limit],
          ),
    );
    return rows.map(toAudit);
  }
}
