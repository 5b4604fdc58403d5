/**
 * @module The fair-use SQL of SQLite: an account's windows in a category are one row of
 * `fair_use_state` (migration 009), a JSON array of `[unit, window, startedAt, endsAt, used]`, so
 * any category, unit and window of a plan is stored without a schema change. A consumption is
 * decided in memory under the write lock (group-commit.ts) and writes its category's row as decided:
 * only that category's windows are serialised, however many the account has in others.
 */
import type { WindowState } from '../../domain/fair-use.js';
import {
  inKeyOrder,
  pushStoredWindows,
  type StoredWindow,
  storedWindowsOf,
} from '../../domain/fair-use-order.js';
import type { UsageCommit } from '../store.js';
import type { SqliteExecutor } from './executor.js';

const WINDOWS_SELECT = 'SELECT category, windows FROM fair_use_state WHERE account_id = ? ORDER BY category';

const WINDOWS_UPSERT = `INSERT INTO fair_use_state (account_id, category, windows) VALUES (?, ?, ?)
  ON CONFLICT (account_id, category) DO UPDATE SET windows = excluded.windows`;

export class FairUseSql {
  constructor(private readonly x: SqliteExecutor) {}

  /** Read before every consumption not cached (and for each snapshot): a row per category, in key order. */
  windowsOf(accountId: string): WindowState[] {
    const rows = this.x.sql(WINDOWS_SELECT).raw().all(accountId) as [string, string][];
    const windows: WindowState[] = [];
    for (const [category, text] of rows)
      pushStoredWindows(windows, category, JSON.parse(text) as StoredWindow[]);
    return inKeyOrder(windows);
  }

  /**
   * Writes the windows of the category `c` consumed from as `after` (the account's windows, in key
   * order, as the consumption was decided to leave them; nothing else writes them under the write lock).
   */
  writeWindows(c: UsageCommit, after: readonly WindowState[]): void {
    const first = c.increments[0];
    if (!first) return;
    const stored = storedWindowsOf(after, first.category);
    this.x.sql(WINDOWS_UPSERT).run(c.accountId, first.category, JSON.stringify(stored));
  }
}
