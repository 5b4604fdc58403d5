/**
 * @module What a committed write changed, as every store reports it: to one observer, in the same
 * synchronous step as the commit (or, for another process's commits, as soon as the store learns of
 * them). Whatever remembers database state in front of a store (the read cache) keeps itself true
 * from these reports alone; the stores name no cache.
 */
import type { WindowState } from '../domain/fair-use.js';

/** An account's fair-use windows (in key order) and token balance. */
export interface AccountUsage {
  windows: WindowState[];
  tokenBalance: number;
  /** The balance below which a charge records `tokens.low_balance` (none: null); absent when not known. */
  lowBalance?: number | null;
  /**
   * Set: only these categories changed, and `windows` holds every window of each of them (a
   * PostgreSQL consumption reads and writes only its own; a SQLite one holds the account's others
   * too, as they were). A cache merges these categories alone, whatever else the account has.
   */
  only?: readonly string[];
}

/**
 * What a write touched. `{account}`: anything about that account (counts, balance, windows, status,
 * plan). `after`: a consumption left the account's windows and balance exactly so, and nothing could
 * interleave with it (SQLite: reported under the write lock). `'keys'`: which digests are valid
 * changed (a revocation, a re-digest, a closed account). `'all'`: anything may have changed.
 */
export type Change = { account: string; after?: AccountUsage } | 'keys' | 'all';

export interface ChangeObserver {
  changed(change: Change): void;
  /**
   * The account's windows and balance as the observer knows them, exact as of the last change
   * reported for it; undefined when it knows nothing. Asked by a store that decides consumptions
   * under its write lock, once every other process's commits have been reported.
   */
  usage(accountId: string): AccountUsage | undefined;
}

/** Every store reports through this, so no store keeps its own list of what a change means. */
export function report(observer: ChangeObserver | undefined, changes: readonly Change[]): void {
  if (observer === undefined) return;
  for (let i = 0; i < changes.length; i++) observer.changed(changes[i]!);
}
