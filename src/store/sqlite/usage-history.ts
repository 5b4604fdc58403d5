/** @module SQLite's usage rollup: additive upserts of per-day and per-hour counts, summed reads, pruning (store.ts, UsageHistoryStore). */

import type { UsageGrouping, UsageRow } from '../../domain/usage-history.js';
import type { HourGroup, HourRow } from '../../domain/usage-hours.js';
import {
  toUsageGroup,
  USAGE_COUNT_COLUMNS,
  USAGE_GROUP_COLUMN,
  USAGE_SUMS,
  type UsageGroupRow,
  usageCountValues,
} from '../rows.js';
import type { UsageGroup, UsageHistoryStore } from '../store.js';
import {
  UNIT_COLUMNS,
  type UnitSumRow,
  unitAmountValues,
  unitSumsQuery,
  withUnits,
} from '../usage-unit-rows.js';
import type { SqliteExecutor } from './executor.js';

const ADD = `INSERT INTO usage_daily (account_id, day, key_id, tool, surface, ${USAGE_COUNT_COLUMNS.join(', ')})
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (account_id, day, key_id, tool, surface) DO UPDATE SET
  ${USAGE_COUNT_COLUMNS.map((c) => `${c} = ${c} + excluded.${c}`).join(', ')}`;

const ADD_HOUR = `INSERT INTO usage_hourly (account_id, day, hour, calls, tokens, failed) VALUES (?, ?, ?, ?, ?, ?)
  ON CONFLICT (account_id, day, hour) DO UPDATE SET
  calls = calls + excluded.calls, tokens = tokens + excluded.tokens, failed = failed + excluded.failed`;

const ADD_UNITS = `INSERT INTO usage_daily_units (${UNIT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (account_id, day, key_id, tool, surface, unit) DO UPDATE SET amount = amount + excluded.amount`;

export class SqliteUsageHistory implements UsageHistoryStore {
  constructor(private readonly x: SqliteExecutor) {}

  async add(rows: readonly UsageRow[], hours: readonly HourRow[] = []): Promise<void> {
    if (rows.length === 0 && hours.length === 0) return;
    const units = unitAmountValues(rows);
    await this.x.writeTx(() => {
      const add = this.x.sql(ADD);
      for (const r of rows) add.run(r.accountId, r.day, r.keyId, r.tool, r.surface, ...usageCountValues(r));
      const addHour = this.x.sql(ADD_HOUR);
      for (const h of hours) addHour.run(h.accountId, h.day, h.hour, h.calls, h.tokens, h.failed);
      if (units.length === 0) return;
      const addUnit = this.x.sql(ADD_UNITS);
      for (const u of units) addUnit.run(...u);
    });
  }

  async hours(accountId: string, day: string): Promise<HourGroup[]> {
    return this.x.attempt(
      () =>
        this.x
          .sql(
            'SELECT hour, calls, tokens, failed FROM usage_hourly WHERE account_id = ? AND day = ? ORDER BY hour',
          )
          .all(accountId, day) as HourGroup[],
    );
  }

  pruneHours(day: string): Promise<number> {
    return this.x.write(() => this.x.sql('DELETE FROM usage_hourly WHERE day < ?').run(day).changes);
  }

  async history(accountId: string, from: string, to: string, by: UsageGrouping): Promise<UsageGroup[]> {
    const col = USAGE_GROUP_COLUMN[by];
    // Both reads in one synchronous turn: this process writes nothing between them (another one's
    // flush may, which moves an analytics figure by a second's worth, no more).
    const [rows, units] = await this.x.attempt(() => [
      this.x
        .sql(
          `SELECT ${col} AS grp, ${USAGE_SUMS} FROM usage_daily
             WHERE account_id = ? AND day >= ? AND day <= ? GROUP BY ${col} ORDER BY ${col}`,
        )
        .all(accountId, from, to) as UsageGroupRow[],
      this.x.sql(unitSumsQuery(by, '?', '?', '?')).all(accountId, from, to) as UnitSumRow[],
    ]);
    return withUnits(rows.map(toUsageGroup), units);
  }

  prune(day: string): Promise<number> {
    return this.x.writeTx(() => {
      this.x.sql('DELETE FROM usage_daily_units WHERE day < ?').run(day);
      return this.x.sql('DELETE FROM usage_daily WHERE day < ?').run(day).changes;
    });
  }
}
