/** @module SQLite's usage rollup: additive upserts of per-day counts, summed reads, pruning (store.ts, UsageHistoryStore). */
import type { UsageGrouping, UsageRow } from '../../domain/usage-history.js';
import {
  toUsageGroup,
  USAGE_COUNT_COLUMNS,
  USAGE_GROUP_COLUMN,
  USAGE_SUMS,
  type UsageGroupRow,
  usageCountValues,
} from '../rows.js';
import type { UsageGroup, UsageHistoryStore } from '../store.js';
import type { SqliteExecutor } from './executor.js';

const ADD = `INSERT INTO usage_daily (account_id, day, key_id, tool, surface, ${USAGE_COUNT_COLUMNS.join(', ')})
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (account_id, day, key_id, tool, surface) DO UPDATE SET
  ${USAGE_COUNT_COLUMNS.map((c) => `${c} = ${c} + excluded.${c}`).join(', ')}`;

export class SqliteUsageHistory implements UsageHistoryStore {
  constructor(private readonly x: SqliteExecutor) {}

  async add(rows: readonly UsageRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.x.writeTx(() => {
      const add = this.x.sql(ADD);
      for (const r of rows) add.run(r.accountId, r.day, r.keyId, r.tool, r.surface, ...usageCountValues(r));
    });
  }

  async history(accountId: string, from: string, to: string, by: UsageGrouping): Promise<UsageGroup[]> {
    const col = USAGE_GROUP_COLUMN[by];
    const rows = await this.x.attempt(
      () =>
        this.x
          .sql(
            `SELECT ${col} AS grp, ${USAGE_SUMS} FROM usage_daily
             WHERE account_id = ? AND day >= ? AND day <= ? GROUP BY ${col} ORDER BY ${col}`,
          )
          .all(accountId, from, to) as UsageGroupRow[],
    );
    return rows.map(toUsageGroup);
  }

  prune(day: string): Promise<number> {
    return this.x.write(() => this.x.sql('DELETE FROM usage_daily WHERE day < ?').run(day).changes);
  }
}
