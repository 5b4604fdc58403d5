/**
 * @module SQLite's token ledger: append-only entries, the balance moved by one conditional
 * statement in the same transaction (never below 0), idempotency keys replayed or refused.
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
import type { LedgerAppend, LedgerOutcome, LedgerStore } from '../ledger-store.js';
import type { Page } from '../page.js';
import { Rollback } from '../rollback.js';
import { appendedLedger, LEDGER_COLUMNS, type LedgerRow, ledgerValues, toLedger } from '../rows.js';
import { writeAudit } from './audit.js';
import type { SqliteExecutor } from './executor.js';
import { recordEvents } from './webhooks.js';

/** Inside a transaction: replay, refuse, or move the balance and append the entry. */
export function applyLedger(x: SqliteExecutor, entry: LedgerAppend): LedgerOutcome {
  if (entry.idempotencyKey !== null) {
    const prior = x
      .sql('SELECT * FROM token_ledger WHERE account_id = ? AND idempotency_key = ?')
      .get(entry.accountId, entry.idempotencyKey) as LedgerRow | undefined;
    if (prior) {
      return replayOrConflict(prior.request_hash, entry.requestHash, () => ({
        kind: 'replayed' as const,
        entry: toLedger(prior),
      }));
    }
  }
  const delta = ledgerDelta(entry.kind, entry.amount);
  // One conditional statement: the balance moves only if it stays within 0 and MAX_BALANCE.
  const moved = x
    .sql(
      'UPDATE accounts SET token_balance = token_balance + ? WHERE id = ? AND token_balance + ? BETWEEN 0 AND ? RETURNING token_balance, low_balance',
    )
    .get(delta, entry.accountId, delta, MAX_BALANCE) as
    | { token_balance: number; low_balance: number | null }
    | undefined;
  if (!moved) {
    const acc = x.sql('SELECT token_balance FROM accounts WHERE id = ?').get(entry.accountId) as
      | { token_balance: number }
      | undefined;
    throw new Rollback(acc ? outOfBounds(delta, acc.token_balance) : { kind: 'not_found' });
  }
  // Decided from the balance this statement wrote: each crossing down is this move's alone.
  const stamp = () => ({ id: newId('msg', entry.createdAt * 1000), at: entry.createdAt });
  recordEvents(
    x,
    balanceEvents(
      entry.accountId,
      moved.token_balance - delta,
      moved.token_balance,
      moved.low_balance,
      stamp,
    ),
  );
  // The entry is what was written, not read back: RETURNING * made SQLite buffer the row and the
  // driver build it, a sixth of a metered call's charge (docs/performance.md).
  x.sql(`INSERT INTO token_ledger (${LEDGER_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
    ...ledgerValues(entry, delta, moved.token_balance),
  );
  return { kind: 'applied', entry: appendedLedger(entry, delta, moved.token_balance) };
}

/** store.ledger on SQLite. */
export class SqliteLedger implements LedgerStore {
  constructor(private readonly x: SqliteExecutor) {}

  append(entry: LedgerAppend, audit?: AuditEntry): Promise<LedgerOutcome> {
    const x = this.x;
    return x.write(
      () => {
        try {
          return x.db
            .transaction(() => {
              const outcome = applyLedger(x, entry);
              if (outcome.kind === 'applied') writeAudit(x, audit);
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

  list(accountId: string, page: Page): Promise<LedgerEntry[]> {
    const x = this.x;
    return x.attempt(() =>
      (
        x
          .sql('SELECT * FROM token_ledger WHERE account_id = ? AND id > ? ORDER BY id LIMIT ?')
          .all(accountId, page.after ?? '', page.limit) as LedgerRow[]
      ).map(toLedger),
    );
  }
}
