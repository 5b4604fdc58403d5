/**
 * @module What decided SQLite consumptions write, as a flat list of statements and their
 * parameters: built on the event loop while a batch is decided, then run by whichever connection
 * commits it (the event loop's own, or the writer thread's: writer.ts). The list is plain data
 * (numbers, strings, null), so it crosses to a thread as it is, and the statements it names are
 * fixed: the writer prepares them once.
 */

import type { AuditEntry } from '../../domain/audit.js';
import { MAX_BALANCE } from '../../domain/ledger.js';
import type { WebhookEvent } from '../../domain/webhooks.js';
import { eventBody } from '../../domain/webhooks.js';
import type { LedgerAppend } from '../ledger-store.js';
import { AUDIT_COLUMNS, auditValues, LEDGER_COLUMNS, ledgerValues } from '../rows.js';

/**
 * The statements a consumption may write, by their index in the list. The balance moves by its
 * delta under the same condition as every ledger entry (within 0 and MAX_BALANCE), and gives back
 * the balance it left: a batch whose balance is not the one decided fails as a whole.
 */
export const CONSUMPTION_SQL = [
  `INSERT INTO fair_use_state (account_id, category, windows) VALUES (?, ?, ?)
  ON CONFLICT (account_id, category) DO UPDATE SET windows = excluded.windows`,
  `UPDATE accounts SET token_balance = token_balance + ? WHERE id = ? AND token_balance + ? BETWEEN 0 AND ${MAX_BALANCE} RETURNING token_balance`,
  `INSERT INTO token_ledger (${LEDGER_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  'INSERT INTO webhook_events (id, type, account_id, body, created_at) VALUES (?, ?, ?, ?, ?)',
  `INSERT INTO audit_log (${AUDIT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  `INSERT INTO usage_idempotency (account_id, idempotency_key, request_hash, response, created_at)
       VALUES (?, ?, ?, ?, ?)`,
] as const;

const WINDOWS = 0;
const BALANCE = 1;
const LEDGER = 2;
const EVENT = 3;
const AUDIT = 4;
const IDEMPOTENCY = 5;

/** No value expected of a statement: it is run, not read. */
const RUN = -1;

/**
 * The writes of a batch, flat: for each statement its index in CONSUMPTION_SQL, the value it must
 * give back (RUN: none), the number of its parameters, then the parameters.
 */
export class ConsumptionWrites {
  readonly ops: unknown[] = [];

  get empty(): boolean {
    return this.ops.length === 0;
  }

  windows(accountId: string, category: string, stored: string): void {
    this.ops.push(WINDOWS, RUN, 3, accountId, category, stored);
  }

  /** The charge's ledger entry and the balance it leaves, which the statement must give back. */
  charge(entry: LedgerAppend, delta: number, balanceAfter: number): void {
    this.ops.push(BALANCE, balanceAfter, 3, delta, entry.accountId, delta);
    this.ops.push(LEDGER, RUN, 10, ...ledgerValues(entry, delta, balanceAfter));
  }

  events(events: readonly WebhookEvent[]): void {
    for (const e of events) this.ops.push(EVENT, RUN, 5, e.id, e.type, e.accountId, eventBody(e), e.at);
  }

  audit(entry: AuditEntry | undefined): void {
    if (entry) this.ops.push(AUDIT, RUN, 7, ...auditValues(entry));
  }

  idempotency(accountId: string, key: string, requestHash: string, response: string, at: number): void {
    this.ops.push(IDEMPOTENCY, RUN, 5, accountId, key, requestHash, response, at);
  }
}

/** A statement of CONSUMPTION_SQL as better-sqlite3 prepares it (one that gives a value: plucked). */
export interface PreparedWrite {
  run(...params: unknown[]): unknown;
  get(...params: unknown[]): unknown;
}

interface Preparing {
  prepare(sql: string): PreparedWrite & { pluck(): PreparedWrite };
}

// The two functions below name nothing outside themselves: the writer thread runs their very
// source (writer-thread.ts), so that one text says how a batch's writes are run, wherever.

/** CONSUMPTION_SQL (given as `sql`) prepared on `db`, the statement that gives back a value plucked. */
export function prepareConsumptionWrites(db: Preparing, sql: readonly string[]): PreparedWrite[] {
  return sql.map((text) => (/\bRETURNING\b/.test(text) ? db.prepare(text).pluck() : db.prepare(text)));
}

/**
 * Runs `ops` (ConsumptionWrites.ops) on the prepared statements, in a transaction the caller holds.
 * Throws, with `stale` set, when a statement does not give back what was decided.
 */
export function runConsumptionWrites(statements: readonly PreparedWrite[], ops: readonly unknown[]): void {
  let i = 0;
  while (i < ops.length) {
    const index = ops[i] as number;
    const statement = statements[index];
    const expect = ops[i + 1] as number;
    const n = ops[i + 2] as number;
    const params = ops.slice(i + 3, i + 3 + n);
    i += 3 + n;
    if (!statement) throw new Error(`no consumption statement ${index}`);
    if (expect === -1) {
      statement.run(...params);
      continue;
    }
    const got = statement.get(...params);
    // Stale: decided on a value that changed since (the writer thread's batches are decided ahead).
    if (got !== expect)
      throw Object.assign(
        new Error(`a consumption's write gave ${String(got)} where ${expect} was decided`),
        {
          stale: true,
        },
      );
  }
}
