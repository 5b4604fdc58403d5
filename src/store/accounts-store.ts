/** @module Accounts, and the snapshot of one that `get_account` reads. */
import type { Account, AccountStatus } from '../domain/accounts.js';
import type { AuditEntry } from '../domain/audit.js';
import type { EpochSeconds } from '../domain/clock.js';
import type { WindowState } from '../domain/fair-use.js';
import type { Plan } from '../domain/plans.js';
import type { LedgerAppend } from './ledger-store.js';
import type { Page } from './page.js';

/** What `get_account` needs, read in one go. */
export interface AccountSnapshot {
  account: Account;
  plan: Plan;
  apiKeyCount: number;
  userCount: number;
  windows: WindowState[];
}

export interface AccountPatch {
  name?: string;
  planId?: string;
  status?: AccountStatus;
  unlimitedOverride?: boolean | null;
  lowBalance?: number | null;
}

export interface AccountStore {
  /** Creates the account, with its opening grant in the same transaction. */
  create(account: Account, openingGrant?: LedgerAppend, audit?: AuditEntry): Promise<void>;
  /**
   * create, only if the database has no account yet, decided in the creating transaction: of
   * servers starting together on an empty database, one creates its first-run account. Whether it did.
   */
  createFirst(account: Account, openingGrant?: LedgerAppend, audit?: AuditEntry): Promise<boolean>;
  get(id: string): Promise<Account | undefined>;
  list(page: Page): Promise<Account[]>;
  count(): Promise<number>;
  /** Closing an account revokes all its keys in the same transaction. */
  update(
    id: string,
    patch: AccountPatch,
    now: EpochSeconds,
    audit?: AuditEntry,
  ): Promise<Account | undefined>;
  /** The account with its plan, its active key and user counts and its windows, in one read. */
  snapshot(accountId: string): AccountSnapshot | undefined | Promise<AccountSnapshot | undefined>;
}
