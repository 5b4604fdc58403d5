/**
 * @module PostgreSQL's token ledger: append-only entries, the balance moved by one conditional
 * statement in the same transaction (never below 0), idempotency keys serialised by an advisory
 * lock and replayed or refused.
 */
import type { AuditEntry } from '../../domain/audit.js';
import { newId } from '../../domain/ids.js';
import {
  type LedgerEntry,
  ledgerDelta,
  MAX_BALANCE,
  outOfBounds,
  replayOrConflict,
} from '../../domain/ledger.js';
import { balanceEvents } from '../../domain/webhooks.js';
import type { Change } from '../changes.js';
import type { LedgerAppend, LedgerOutcome, LedgerStore } from '../ledger-store.js';
import type { Page } from '../page.js';
import { Rollback } from '../rollback.js';
import { LEDGER_COLUMNS, type LedgerRow, ledgerValues, toLedger } from '../rows.js';
import { writeAudit } from './audit.js';
import { guard, type PgQueryable } from './driver.js';
import { lockIdempotencyKey, type PgTransactions } from './transactions.js';
import { recordEvents } from './webhooks.js';

/** Inside a transaction: replay, refuse, or move the balance and append the entry. */
export async function applyLedger(
  t: PgTransactions,
  entry: LedgerAppend,
  db: PgQueryable,
): Promise<LedgerOutcome> {
  if (entry.idempotencyKey !== null) {
    await lockIdempotencyKey(db, 'ledger', entry.accountId, entry.idempotencyKey);
    const prior = await t.one<LedgerRow>(
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
  // One conditional statement, re-checked by PostgreSQL on the locked row: the balance stays
  // within 0 and MAX_BALANCE.
  const moved = await t.one<{ token_balance: number; low_balance: string | null }>(
    'UPDATE accounts SET token_balance = token_balance + $1 WHERE id = $2 AND token_balance + $1 BETWEEN 0 AND $3 RETURNING token_balance, low_balance',
    [delta, entry.accountId, MAX_BALANCE],
    db,
  );
  if (!moved) {
    const acc = await t.one<{ token_balance: number }>(
      'SELECT token_balance FROM accounts WHERE id = $1',
      [entry.accountId],
      db,
    );
    throw new Rollback(acc ? outOfBounds(delta, acc.token_balance) : { kind: 'not_found' });
  }
  // Decided from the balance this statement wrote: each crossing down is this move's alone.
  const after = Number(moved.token_balance);
  const low = moved.low_balance === null ? null : Number(moved.low_balance);
  const stamp = () => ({ id: newId('msg', entry.createdAt * 1000), at: entry.createdAt });
  await recordEvents(balanceEvents(entry.accountId, after - delta, after, low, stamp), db);
  const row = (await t.one<LedgerRow>(
    `INSERT INTO token_ledger (${LEDGER_COLUMNS})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING *`,
    ledgerValues(entry, delta, moved.token_balance),
    db,
  ))!;
  return { kind: 'applied', entry: toLedger(row) };
}

/** store.ledger on PostgreSQL. */
export class PgLedger implements LedgerStore {
  constructor(private readonly t: PgTransactions) {}

  async append(entry: LedgerAppend, audit?: AuditEntry): Promise<LedgerOutcome> {
    const t = this.t;
    return t.answer(() =>
      t.tx(
        async (db) => {
          const outcome = await applyLedger(t, entry, db);
          if (outcome.kind === 'applied') await writeAudit(audit, db);
          return outcome;
        },
        (outcome): Change[] => (outcome.kind === 'applied' ? [{ account: entry.accountId }] : []),
      ),
    );
  }

  async list(accountId: string, page: Page): Promise<LedgerEntry[]> {
    const t = this.t;
    return guard(async () =>
      (
        await t.all<LedgerRow>(
          'SELECT * FROM token_ledger WHERE account_id = $1 AND id > $2 ORDER BY id LIMIT $3',
          [accountId, page.after ?? '', page.limit],
        )
      ).map(toLedger),
    );
  }
}
