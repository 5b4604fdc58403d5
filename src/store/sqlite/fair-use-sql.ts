/**
 * @module The fair-use SQL of SQLite: an account's windows in a category are one row of `fair_use`
 * (migration 003), each window three columns; read as arrays, and consumed by one conditional upsert
 * of that row, generated per list of windows and prepared once.
 */
import { byWindowKey, sameSlot, type WindowState } from '../../domain/fair-use.js';
import { type Category, WINDOW_SLOTS } from '../../domain/plans.js';
import type { UsageCommit } from '../store.js';
import type { SqliteStatement } from './driver.js';
import type { SqliteExecutor } from './executor.js';

export class FairUseSql {
  /** addToWindows' upserts, by slotsKey (at most one per category and list of windows a consumption touches). */
  private readonly windowsUpserts = new Map<number, SqliteStatement>();

  constructor(private readonly x: SqliteExecutor) {}

  /**
   * Read before every consumption not cached (and for each snapshot): a row per category (migration
   * 003), as arrays, which better-sqlite3 builds faster than objects; windows never started are NULL.
   */
  windowsOf(accountId: string): WindowState[] {
    const rows = this.x.sql(WINDOWS_SELECT).raw().all(accountId) as (string | number | null)[][];
    const windows: WindowState[] = [];
    for (const row of rows) {
      const category = row[0] as Category;
      for (let i = 0; i < WINDOW_COLUMNS.length; i++) {
        const startedAt = row[1 + 3 * i] as number | null;
        if (startedAt === null) continue;
        const { unit, window } = WINDOW_COLUMNS[i]!;
        windows.push({
          category,
          unit,
          window,
          startedAt,
          endsAt: row[2 + 3 * i] as number,
          used: row[3 + 3 * i] as number,
        });
      }
    }
    return windows;
  }

  /**
   * All of a consumption's windows in one conditional upsert of its category's row: each window
   * starts if it is not running and adds to it if it fits under its limit (the insert only if each
   * amount alone fits). Its change count says whether the row took every amount (no RETURNING:
   * SQLite buffers returned rows, which costs more than the upsert). Positional parameters, passed
   * as arguments: better-sqlite3 binds named ones by looking each name up on an object, which cost
   * as much again, and an array's elements one by one through V8's generic property lookup.
   */
  addToWindows(c: UsageCommit): boolean {
    const incs = c.increments;
    if (incs.length === 0) return true;
    const params: unknown[] = [c.accountId, c.now];
    for (const inc of incs) params.push(c.now + inc.lengthSeconds, inc.amount);
    // Each limit twice: for the insert's condition, then for the update's.
    for (let twice = 0; twice < 2; twice++) for (const inc of incs) params.push(inc.limit);
    const key = slotsKey(incs);
    let upsert = this.windowsUpserts.get(key);
    if (!upsert) {
      upsert = this.x.db.prepare(windowsUpsertSql(incs));
      this.windowsUpserts.set(key, upsert);
    }
    return upsert.run(...params).changes === 1;
  }
}

/**
 * A number for the list of slots of these windows, in order (their places in WINDOW_SLOTS): cheaper
 * to look up than a joined string.
 */
function slotsKey(incs: UsageCommit['increments']): number {
  let key = 0;
  for (const inc of incs) {
    const n = WINDOW_SLOTS.findIndex((slot) => sameSlot(slot, inc));
    if (n < 0) throw new Error(`no window ${inc.category}.${inc.unit}.${inc.window}`);
    key = key * (WINDOW_SLOTS.length + 1) + n + 1;
  }
  return key;
}

/** The columns' name of a window in a fair_use row (migration 003): `<unit>_<window>`, then `_start`, `_end`, `_used`. */
const columnOf = (w: { unit: string; window: string }) => `${w.unit}_${w.window}`;

/** A fair_use row's windows, each three columns, in the windows' key order (that of one category's slots). */
const WINDOW_COLUMNS = WINDOW_SLOTS.filter((s) => s.category === WINDOW_SLOTS[0]!.category)
  .sort(byWindowKey)
  .map((w) => ({ unit: w.unit, window: w.window, column: columnOf(w) }));

const WINDOWS_SELECT = `SELECT category, ${WINDOW_COLUMNS.map(({ column: w }) => `${w}_start, ${w}_end, ${w}_used`).join(', ')}
  FROM fair_use WHERE account_id = ?`;

/** Whether window `w` of the row is running at the consumption's time (never started: NULL, not running). */
const running = (w: string) => `w.${w}_end > excluded.${w}_start`;

/** Window `w` of the row after the consumption: added to while running, else started again with the amount. */
const windowUpdate = (w: string) =>
  `${w}_used = CASE WHEN ${running(w)} THEN w.${w}_used + excluded.${w}_used ELSE excluded.${w}_used END,
         ${w}_start = CASE WHEN ${running(w)} THEN w.${w}_start ELSE excluded.${w}_start END,
         ${w}_end = CASE WHEN ${running(w)} THEN w.${w}_end ELSE excluded.${w}_end END`;

/** Window `w` takes the amount under the limit bound next. */
const windowFits = (w: string) =>
  `(CASE WHEN ${running(w)} THEN w.${w}_used ELSE 0 END) + excluded.${w}_used <= ?`;

/**
 * The upsert of addToWindows for these windows, all of one category: the account, the time, each
 * window's end and amount, then each window's limit twice (the insert's condition, the update's).
 * The category, units and windows written into it are the domain's own (slotsKey, computed first,
 * refuses others); as literals they spare binding a string.
 */
function windowsUpsertSql(incs: UsageCommit['increments']): string {
  const category = incs[0]!.category;
  if (incs.some((i) => i.category !== category)) throw new Error('a consumption is of one category');
  const ws = incs.map(columnOf);
  const n = ws.length;
  // VALUES' columns: 1 the account, 2 the time, 3 + 2k and 4 + 2k window k's end and amount,
  // 3 + 2n + k window k's limit.
  const values = ['?', '?', ...ws.flatMap(() => ['?', '?']), ...ws.map(() => '?')].join(', ');
  return `INSERT INTO fair_use AS w (account_id, category, ${ws.map((w) => `${w}_start, ${w}_end, ${w}_used`).join(', ')})
       SELECT column1, '${category}', ${ws.map((_, k) => `column2, column${3 + 2 * k}, column${4 + 2 * k}`).join(', ')}
       FROM (VALUES (${values}))
       WHERE ${ws.map((_, k) => `column${4 + 2 * k} <= column${3 + 2 * n + k}`).join(' AND ')}
       ON CONFLICT (account_id, category) DO UPDATE SET
         ${ws.map(windowUpdate).join(',\n         ')}
       WHERE ${ws.map(windowFits).join(' AND ')}`;
}
