/**
 * @module PostgreSQL's account creation: the account and its opening grant in one transaction, and
 * the first account, made only into a database that has none however many servers ask at once.
 */
import type { Account } from '../../domain/accounts.js';
import type { AuditEntry } from '../../domain/audit.js';
import type { LedgerAppend } from '../store.js';
import { writeAudit } from './audit.js';
import { applyLedger } from './ledger.js';
import type { PgTransactions } from './transactions.js';

/** The advisory lock that makes "the first account" one account (MIGRATION_LOCK's neighbour). */
const FIRST_ACCOUNT_LOCK = 7_264_002;

/** Whether it was created: always, unless `onlyFirst` and the database has an account already. */
export function insertAccount(
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
