/**
 * @module The fair-use SQL of SQLite: an account's windows in a category are one row of
 * `fair_use_state` (migration 009), a JSON array of `[unit, window, startedAt, endsAt, used]`, so
 * any category, unit and window of a plan is stored without a schema change. A consumption is
 * decided in memory (consumption-decide.ts), which writes its category's row as decided
 * (consumption-writes.ts): only that category's windows are serialised, however many the account has.
 */
import type { WindowState } from '../../domain/fair-use.js';
import { inKeyOrder, pushStoredWindows, type StoredWindow } from '../../domain/fair-use-order.js';
import type { SqliteExecutor } from './executor.js';

const WINDOWS_SELECT = 'SELECT category, windows FROM fair_use_state WHERE account_id = ? ORDER BY category';

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
}
