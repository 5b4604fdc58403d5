/** @module PostgreSQL's usage rollup: additive upserts of per-day and per-hour counts, summed reads, pruning (store.ts, UsageHistoryStore). */

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
import { guard } from './driver.js';
import type { PgTransactions } from './transactions.js';

// Every row in one statement (arrays unnested), whatever the number of rows: one round trip.
const ADD = `INSERT INTO usage_daily (account_id, day, key_id, tool, surface, ${USAGE_COUNT_COLUMNS.join(', ')})
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
    $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[])
  ON CONFLICT (account_id, day, key_id, tool, surface) DO UPDATE SET
  ${USAGE_COUNT_COLUMNS.map((c) => `${c} = usage_daily.${c} + excluded.${c}`).join(', ')}`;

// The hours with the days in one statement (a data-modifying WITH runs whatever the rest reads of
// it): one round trip, and both written or neither, so a retried flush counts nothing twice.
const ADD_WITH_HOURS = `WITH daily AS (${ADD} RETURNING 1)
  INSERT INTO usage_hourly (account_id, day, hour, calls, tokens, failed)
  SELECT * FROM unnest($12::text[], $13::text[], $14::int[], $15::bigint[], $16::bigint[], $17::bigint[])
  ON CONFLICT (account_id, day, hour) DO UPDATE SET calls = usage_hourly.calls + excluded.calls,
  tokens = usage_hourly.tokens + excluded.tokens, failed = usage_hourly.failed + excluded.failed`;

type HourGroupRow = {
  hour: number;
  calls: number | string;
  tokens: number | string;
  failed: number | string;
};

export class PgUsageHistory implements UsageHistoryStore {
  constructor(private readonly t: PgTransactions) {}

  async add(rows: readonly UsageRow[], hours: readonly HourRow[] = []): Promise<void> {
    if (rows.length === 0 && hours.length === 0) return;
    const columns: unknown[][] = Array.from({ length: 11 }, () => []);
    for (const r of rows) {
      const values = [r.accountId, r.day, r.keyId, r.tool, r.surface, ...usageCountValues(r)];
      for (const [i, v] of values.entries()) columns[i]!.push(v);
    }
    if (hours.length === 0) {
      await guard(() => this.t.pool.query(ADD, columns));
      return;
    }
    const hourColumns: unknown[][] = Array.from({ length: 6 }, () => []);
    for (const h of hours) {
      for (const [i, v] of [h.accountId, h.day, h.hour, h.calls, h.tokens, h.failed].entries())
        hourColumns[i]!.push(v);
    }
    await guard(() => this.t.pool.query(ADD_WITH_HOURS, [...columns, ...hourColumns]));
  }

  async hours(accountId: string, day: string): Promise<HourGroup[]> {
    const rows = await guard(() =>
      this.t.all<HourGroupRow>(
        'SELECT hour, calls, tokens, failed FROM usage_hourly WHERE account_id = $1 AND day = $2 ORDER BY hour',
        [accountId, day],
      ),
    );
    return rows.map((r) => ({
      hour: Number(r.hour),
      calls: Number(r.calls),
      tokens: Number(r.tokens),
      failed: Number(r.failed),
    }));
  }

  async pruneHours(day: string): Promise<number> {
    const res = await guard(() => this.t.pool.query('DELETE FROM usage_hourly WHERE day < $1', [day]));
    return res.rowCount ?? 0;
  }

  async history(accountId: string, from: string, to: string, by: UsageGrouping): Promise<UsageGroup[]> {
    const col = USAGE_GROUP_COLUMN[by];
    const rows = await guard(() =>
      this.t.all<UsageGroupRow>(
        `SELECT ${col} AS grp, ${USAGE_SUMS} FROM usage_daily
         WHERE account_id = $1 AND day >= $2 AND day <= $3 GROUP BY ${col} ORDER BY ${col}`,
        [accountId, from, to],
      ),
    );
    return rows.map(toUsageGroup);
  }

  async prune(day: string): Promise<number> {
    const res = await guard(() => this.t.pool.query('DELETE FROM usage_daily WHERE day < $1', [day]));
    return res.rowCount ?? 0;
  }
}
