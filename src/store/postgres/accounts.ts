/**
 * @module PostgreSQL's accounts (store.accounts): the account and its opening grant in one
 * transaction, the first account made only into a database that has none however many servers
 * ask at once, closing revokes the keys, and the snapshot `get_account` reads.
 */
import type { Account } from '../../domain/accounts.js';
import type { AuditEntry } from '../../domain/audit.js';
import type { EpochSeconds } from '../../domain/clock.js';
import { type StoredWindow, windowsFromStored } from '../../domain/fair-use-order.js';
import { statusChanged } from '../../domain/webhooks.js';
import type { AccountPatch, AccountSnapshot, AccountStore } from '../accounts-store.js';
import type { Change } from '../changes.js';
import type { LedgerAppend } from '../ledger-store.js';
import type { Page } from '../page.js';
import { type AccountRow, type SnapshotRow, toAccount, toSnapshot } from '../rows.js';
import { writeAudit } from './audit.js';
import { guard } from './driver.js';
import { applyLedger } from './ledger.js';
import type { PgTransactions } from './transactions.js';
import { recordEvents } from './webhooks.js';

/** The advisory lock that makes "the first account" one account (MIGRATION_LOCK's neighbour). */
const FIRST_ACCOUNT_LOCK = 7_264_002;

/** Whether it was created: always, unless `onlyFirst` and the database has an account already. */
function insertAccount(
  t: PgTransactions,
  account: Account,
  openingGrant: LedgerAppend | undefined,
  audit: AuditEntry | undefined,
  onlyFirst: boolean,
): Promise<boolean> {
  return t.tx(
    async (db) => {
      if (onlyFirst) {
        // Held to the COMMIT: the next server to ask reads the accounts after this one's is in.
        await db.query('SELECT pg_advisory_xact_lock($1)', [FIRST_ACCOUNT_LOCK]);
        if ((await db.query('SELECT 1 FROM accounts LIMIT 1')).rowCount) return false;
      }
      await db.query(
        `INSERT INTO accounts (id, name, plan_id, status, unlimited_override, token_balance, created_at, updated_at, plan_since)
         VALUES ($1, $2, $3, $4, $5, 0, $6, $7, $8)`,
        [
          account.id,
          account.name,
          account.planId,
          account.status,
          account.unlimitedOverride,
          account.createdAt,
          account.updatedAt,
          account.planSince,
        ],
      );
      if (openingGrant) {
        const outcome = await applyLedger(t, openingGrant, db);
        if (outcome.kind !== 'applied') throw new Error(`Opening grant not applied: ${outcome.kind}`);
      }
      await writeAudit(audit, db);
      return true;
    },
    (created) => (created ? [{ account: account.id }] : []),
  );
}

export class PgAccounts implements AccountStore {
  constructor(private readonly t: PgTransactions) {}

  async create(account: Account, openingGrant?: LedgerAppend, audit?: AuditEntry): Promise<void> {
    await insertAccount(this.t, account, openingGrant, audit, false);
  }

  createFirst(account: Account, openingGrant?: LedgerAppend, audit?: AuditEntry): Promise<boolean> {
    return insertAccount(this.t, account, openingGrant, audit, true);
  }

  async get(id: string): Promise<Account | undefined> {
    const row = await guard(() => this.t.one<AccountRow>('SELECT * FROM accounts WHERE id = $1', [id]));
    return row && toAccount(row);
  }

  async list(page: Page): Promise<Account[]> {
    const rows = await guard(() =>
      this.t.all<AccountRow>('SELECT * FROM accounts WHERE id > $1 ORDER BY id LIMIT $2', [
        page.after ?? '',
        page.limit,
      ]),
    );
    return rows.map(toAccount);
  }

  async count(): Promise<number> {
    return guard(async () => (await this.t.one<{ n: number }>('SELECT count(*) AS n FROM accounts'))!.n);
  }

  async update(
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

  async snapshot(accountId: string): Promise<AccountSnapshot | undefined> {
    // One round trip: the account (its windows with it), its plan and both counts.
    const row = await guard(() =>
      this.t.one<SnapshotRow & { fair_use: Record<string, StoredWindow[]> }>(
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
    return row && toSnapshot(row, windowsFromStored(row.fair_use));
  }
}
