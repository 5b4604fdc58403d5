/** @module Metered consumption: windows, a token charge and an idempotency record, all or nothing. */
import type { AuditEntry } from '../domain/audit.js';
import type { EpochSeconds } from '../domain/clock.js';
import type { Exceeded, Increment, WindowState } from '../domain/fair-use.js';
import type { LedgerAppend } from './ledger-store.js';

/** One metered consumption: windows, optionally a token charge, optionally an idempotency record; all or nothing. */
export interface UsageCommit {
  accountId: string;
  increments: readonly Increment[];
  now: EpochSeconds;
  charge?: { entryId: string; amount: number; reason: string | null };
  idempotency?: { key: string; requestHash: string };
  /**
   * The thresholds (percent, ascending) some webhook endpoint wants for this account: a window this
   * consumption takes across one records a `fair_use.threshold` event in its transaction.
   */
  thresholds?: readonly number[];
  /** Builds the answer from the windows after the consumption; stored with the idempotency key. */
  render: (windows: WindowState[], balanceAfter: number | null) => unknown;
}

/** The ledger entry of a consumption's charge, as both stores append it. */
export function chargeEntry(c: UsageCommit, charge: NonNullable<UsageCommit['charge']>): LedgerAppend {
  return {
    id: charge.entryId,
    accountId: c.accountId,
    kind: 'charge',
    amount: charge.amount,
    reason: charge.reason,
    idempotencyKey: null,
    requestHash: '',
    createdAt: c.now,
  };
}

export type UsageOutcome =
  | { kind: 'committed'; response: unknown }
  | { kind: 'replayed'; response: unknown }
  | { kind: 'exceeded'; exceeded: Exceeded }
  | { kind: 'insufficient'; balance: number }
  | { kind: 'idempotency_conflict' }
  | { kind: 'not_found' };

export interface UsageStore {
  /** Checks and consumes atomically: one conditional statement per window, in one transaction. Audited only when 'committed'. */
  commit(commit: UsageCommit, audit?: AuditEntry): Promise<UsageOutcome>;
}
