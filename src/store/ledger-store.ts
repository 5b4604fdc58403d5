/** @module The token ledger: append-only entries, each moving an account's balance. */
import type { AuditEntry } from '../domain/audit.js';
import type { EpochSeconds } from '../domain/clock.js';
import type { LedgerEntry, LedgerKind } from '../domain/ledger.js';
import type { Page } from './page.js';

export interface LedgerAppend {
  id: string;
  accountId: string;
  kind: LedgerKind;
  amount: number;
  reason: string | null;
  idempotencyKey: string | null;
  /** Digest of what was asked; a reused idempotency key must come with the same one. */
  requestHash: string;
  createdAt: EpochSeconds;
}

export type LedgerOutcome =
  | { kind: 'applied'; entry: LedgerEntry }
  | { kind: 'replayed'; entry: LedgerEntry }
  | { kind: 'insufficient'; balance: number }
  /** The balance would pass MAX_BALANCE. */
  | { kind: 'over_maximum'; balance: number }
  | { kind: 'idempotency_conflict' }
  | { kind: 'not_found' };

export interface LedgerStore {
  /** Audited only when 'applied'. */
  append(entry: LedgerAppend, audit?: AuditEntry): Promise<LedgerOutcome>;
  list(accountId: string, page: Page): Promise<LedgerEntry[]>;
}
