/**
 * @module What decided SQLite consumptions write, as a flat list of op codes and their values:
 * built on the event loop while a batch is decided, then run by whichever connection commits it
 * (the event loop's own, or the writer thread's: writer.ts). The list is plain data (numbers,
 * strings, null), so it crosses to a thread as it is, each value once (a list's copy to a thread
 * costs by the value); the statements it runs are fixed, prepared once by each connection.
 */

import type { AuditEntry } from '../../domain/audit.js';
import type { WebhookEvent } from '../../domain/webhooks.js';
import { eventBody } from '../../domain/webhooks.js';
import type { LedgerAppend } from '../ledger-store.js';
import { AUDIT_COLUMNS, auditValues, LEDGER_COLUMNS } from '../rows.js';

/**
 * The statements a consumption may write. A charge sets the balance it decided where the balance
 * is still the one it decided from, and appends its entry with the balance it left.
 */
export const CONSUMPTION_SQL = [
  `INSERT INTO fair_use_state (account_id, category, windows) VALUES (?, ?, ?)
  ON CONFLICT (account_id, category) DO UPDATE SET windows = excluded.windows`,
  'UPDATE accounts SET token_balance = ? WHERE id = ? AND token_balance = ?',
  `INSERT INTO token_ledger (${LEDGER_COLUMNS}) VALUES (?, ?, 'charge', ?, ?, ?, ?, NULL, '', ?)`,
  'INSERT INTO webhook_events (id, type, account_id, body, created_at) VALUES (?, ?, ?, ?, ?)',
  `INSERT INTO audit_log (${AUDIT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  `INSERT INTO usage_idempotency (account_id, idempotency_key, request_hash, response, created_at)
       VALUES (?, ?, ?, ?, ?)`,
] as const;

// What a batch writes, as op codes each followed by its values (a charge's account given once).
const WINDOWS = 0;
const CHARGE = 1;
const EVENT = 2;
const AUDIT = 3;
const IDEMPOTENCY = 4;

/** The writes of a batch, flat, in order: an op code, then its values (runConsumptionWrites reads them). */
export class ConsumptionWrites {
  readonly ops: unknown[] = [];

  get empty(): boolean {
    return this.ops.length === 0;
  }

  windows(accountId: string, category: string, stored: string): void {
    this.ops.push(WINDOWS, accountId, category, stored);
  }

  /** A charge's entry, from the balance decided on before it (which must still be the account's). */
  charge(entry: LedgerAppend, balanceBefore: number): void {
    this.ops.push(
      CHARGE,
      entry.accountId,
      entry.id,
      entry.amount,
      balanceBefore,
      entry.reason,
      entry.createdAt,
    );
  }

  events(events: readonly WebhookEvent[]): void {
    for (const e of events) this.ops.push(EVENT, e.id, e.type, e.accountId, eventBody(e), e.at);
  }

  audit(entry: AuditEntry | undefined): void {
    if (entry) this.ops.push(AUDIT, ...auditValues(entry));
  }

  idempotency(accountId: string, key: string, requestHash: string, response: string, at: number): void {
    this.ops.push(IDEMPOTENCY, accountId, key, requestHash, response, at);
  }
}

/** A statement of CONSUMPTION_SQL as better-sqlite3 prepares it. */
export interface PreparedWrite {
  run(...params: unknown[]): { changes: number };
}

interface Preparing {
  prepare(sql: string): PreparedWrite;
}

// The two functions below name nothing outside themselves (op codes and arities are written in):
// the writer thread runs their very source (writer-thread.ts), so that one text says how a batch's
// writes are run, wherever.

/** CONSUMPTION_SQL (given as `sql`) prepared on `db`. */
export function prepareConsumptionWrites(db: Preparing, sql: readonly string[]): PreparedWrite[] {
  return sql.map((text) => db.prepare(text));
}

/**
 * Runs `ops` (ConsumptionWrites.ops) on the statements prepared from CONSUMPTION_SQL, in a
 * transaction the caller holds. Throws, with `stale` set, when a balance is no longer the one a
 * charge was decided from.
 */
export function runConsumptionWrites(statements: readonly PreparedWrite[], ops: readonly unknown[]): void {
  const [windows, balance, ledger, event, audit, idempotency] = statements as PreparedWrite[];
  let i = 0;
  while (i < ops.length) {
    const op = ops[i];
    if (op === 0) {
      windows!.run(ops[i + 1], ops[i + 2], ops[i + 3]);
      i += 4;
    } else if (op === 1) {
      const account = ops[i + 1];
      const amount = ops[i + 3] as number;
      const before = ops[i + 4] as number;
      // Stale: decided on a balance that changed since (the writer thread's batches are decided ahead).
      if (balance!.run(before - amount, account, before).changes !== 1)
        throw Object.assign(new Error(`the balance of ${String(account)} is no longer ${before}`), {
          stale: true,
        });
      ledger!.run(ops[i + 2], account, amount, -amount, before - amount, ops[i + 5], ops[i + 6]);
      i += 7;
    } else if (op === 2) {
      event!.run(ops[i + 1], ops[i + 2], ops[i + 3], ops[i + 4], ops[i + 5]);
      i += 6;
    } else if (op === 3) {
      audit!.run(ops[i + 1], ops[i + 2], ops[i + 3], ops[i + 4], ops[i + 5], ops[i + 6], ops[i + 7]);
      i += 8;
    } else if (op === 4) {
      idempotency!.run(ops[i + 1], ops[i + 2], ops[i + 3], ops[i + 4], ops[i + 5]);
      i += 6;
    } else throw new Error(`no consumption write ${String(op)}`);
  }
}
