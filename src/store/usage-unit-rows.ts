/**
 * @module The usage rollup's amounts by unit (migration 014's `usage_daily_units`), as both stores
 * write and read them: one row per account, day, key, tool, surface and unit other than records.
 */
import type { UsageGrouping, UsageRow } from '../domain/usage-history.js';
import { USAGE_GROUP_COLUMN } from './rows.js';
import type { UsageGroup } from './store.js';

/** One amount to add: the row's key, a unit and its amount. */
export type UnitAmountValues = [string, string, string, string, string, string, number];

/** Every unit amount of `rows`, as values in the table's column order (none for rows of records only). */
export function unitAmountValues(rows: readonly UsageRow[]): UnitAmountValues[] {
  const values: UnitAmountValues[] = [];
  for (const r of rows) {
    if (!r.units) continue;
    for (const [unit, amount] of Object.entries(r.units))
      if (amount > 0) values.push([r.accountId, r.day, r.keyId, r.tool, r.surface, unit, amount]);
  }
  return values;
}

export const UNIT_COLUMNS = 'account_id, day, key_id, tool, surface, unit, amount';

/** The history's amounts by unit: `$1` the account, `$2` and `$3` the days (placeholders as given). */
export function unitSumsQuery(by: UsageGrouping, account: string, from: string, to: string): string {
  const col = USAGE_GROUP_COLUMN[by];
  return `SELECT ${col} AS grp, unit, sum(amount) AS amount FROM usage_daily_units
    WHERE account_id = ${account} AND day >= ${from} AND day <= ${to}
    GROUP BY ${col}, unit ORDER BY ${col}, unit`;
}

export interface UnitSumRow {
  grp: string;
  unit: string;
  amount: number | string;
}

/** The groups with their amounts by unit (in unit order); a group only there is added, zero counts. */
export function withUnits(groups: UsageGroup[], sums: readonly UnitSumRow[]): UsageGroup[] {
  if (sums.length === 0) return groups;
  const byGroup = new Map(groups.map((g) => [g.group, g]));
  let added = false;
  for (const s of sums) {
    let g = byGroup.get(s.grp);
    if (!g) {
      // Written in the same transaction as its counts, so not expected: kept rather than lost.
      g = { group: s.grp, calls: 0, tokens: 0, records: 0, withData: 0, withoutData: 0, failed: 0 };
      byGroup.set(s.grp, g);
      groups.push(g);
      added = true;
    }
    g.units ??= {};
    g.units[s.unit] = Number(s.amount);
  }
  return added ? groups.sort((a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : 0)) : groups;
}
