/**
 * @module SQLite's accounts (store.accounts): each with its opening grant, the first one made only
 * into an empty database, closing revokes the keys, and the snapshot `get_account` reads.
 */
import type { Account } from '../../domain/accounts.js';
import type { AuditEntry } from '../../domain/audit.js';
import type { EpochSeconds } from '../../domain/clock.js';
import { statusChanged } from '../../domain/webhooks.js';
import type { AccountPatch, AccountSnapshot, AccountStore } from '../accounts-store.js';
import type { Change } from '../changes.js';
import type { LedgerAppend } from '../ledger-store.js';
import type { Page } from '../page.js';
import { type AccountRow, boolToInt, type SnapshotRow, toAccount, toSnapshot } from '../rows.js';
import { writeAudit } from './audit.js';
import type { SqliteExecutor } from './executor.js';
import type { FairUseSql } from './fair-use-sql.js';
import { applyLedger } from './ledger.js';
import { recordEvents } from './webhooks.js';

export class SqliteAccounts implements AccountStore {
  constructor(
    private readonly x: SqliteExecutor,
    private readonly windows: FairUseSql,
  ) {}

  async create(account: Account, openingGrant?: LedgerAppend, audit?: AuditEntry): Promise<void> {
    await this.insertAccount(account, openingGrant, audit, false);
  }

  createFirst(account: Account, openingGrant?: LedgerAppend, audit?: AuditEntry): Promise<boolean> {
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

  async get(id: string): Promise<Account | undefined> {
    const row = await this.x.attempt(
      () => this.x.sql('SELECT * FROM accounts WHERE id = ?').get(id) as AccountRow | undefined,
    );
    return row && toAccount(row);
  }

  async list(page: Page): Promise<Account[]> {
    const rows = await this.x.attempt(
      () =>
        this.x
          .sql('SELECT * FROM accounts WHERE id > ? ORDER BY id LIMIT ?')
          .all(page.after ?? '', page.limit) as AccountRow[],
    );
    return rows.map(toAccount);
  }

  async count(): Promise<number> {
    return this.x.attempt(() => (this.x.sql('SELECT count(*) AS n FROM accounts').get() as { n: number }).n);
  }

  async update(
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

  snapshot(accountId: string): Promise<AccountSnapshot | undefined> {
    return this.x.attempt(() => {
      const row = this.x
        .sql(
          `SELECT a.*, p.unlimited AS plan_unlimited, p.limits AS plan_limits, p.subscription AS plan_subscription,
           (SELECT count(*) FROM api_keys k WHERE k.account_id = a.id AND k.revoked_at IS NULL) AS api_key_count,
           (SELECT count(*) FROM users u WHERE u.account_id = a.id) AS user_count
         FROM accounts a JOIN plans p ON p.id = a.plan_id WHERE a.id = ?`,
        )
        .get(accountId) as SnapshotRow | undefined;
      return row && toSnapshot(row, this.windows.windowsOf(accountId));
    });
  }
}
