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
import {
  UNIT_COLUMNS,
  type UnitSumRow,
  unitAmountValues,
  unitSumsQuery,
  withUnits,
} from '../usage-unit-rows.js';
import { guard } from './driver.js';
import type { PgTransactions } from './transactions.js';

// Every row in one statement (arrays unnested), whatever the number of rows: one round trip.
const ADD = `INSERT INTO usage_daily (account_id, day, key_id, tool, surface, ${USAGE_COUNT_COLUMNS.join(', ')})
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
    $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[])
  ON CONFLICT (account_id, day, key_id, tool, surface) DO UPDATE SET
  ${USAGE_COUNT_COLUMNS.map((c) => `${c} = usage_daily.${c} + excluded.${c}`).join(', ')}`;

/** The hours, their arrays from `$p` on. */
const addHours = (p: number) => `INSERT INTO usage_hourly (account_id, day, hour, calls, tokens, failed)
  SELECT * FROM unnest($${p}::text[], $${p + 1}::text[], $${p + 2}::int[], $${p + 3}::bigint[], $${p + 4}::bigint[], $${p + 5}::bigint[])
  ON CONFLICT (account_id, day, hour) DO UPDATE SET calls = usage_hourly.calls + excluded.calls,
  tokens = usage_hourly.tokens + excluded.tokens, failed = usage_hourly.failed + excluded.failed`;

/** The amounts of other units than records, their arrays from `$p` on. */
const addUnits = (p: number) => `INSERT INTO usage_daily_units (${UNIT_COLUMNS})
  SELECT * FROM unnest($${p}::text[], $${p + 1}::text[], $${p + 2}::text[], $${p + 3}::text[], $${p + 4}::text[], $${p + 5}::text[], $${p + 6}::bigint[])
  ON CONFLICT (account_id, day, key_id, tool, surface, unit) DO UPDATE SET
  amount = usage_daily_units.amount + excluded.amount`;

/**
 * The days, with the hours and the unit amounts when there are, in one statement (a data-modifying
 * WITH runs whatever the rest reads of it): one round trip, and all written or none, so a retried
 * flush counts nothing twice. Made once, by [hours?][units?].
 */
function addStatement(hours: boolean, units: boolean): string {
  const parts = [ADD, ...(hours ? [addHours(12)] : []), ...(units ? [addUnits(hours ? 18 : 12)] : [])];
  const last = parts.pop()!;
  return parts.length === 0
    ? last
    : `WITH ${parts.map((q, i) => `w${i} AS (${q} RETURNING 1)`).join(', ')} ${last}`;
}
const ADD_STATEMENTS = [
  [addStatement(false, false), addStatement(false, true)],
  [addStatement(true, false), addStatement(true, true)],
] as const;

type HourGroupRow = {
  hour: number;
  calls: number | string;
  tokens: number | string;
  failed: number | string;
};

/** `values` as one array per column, for unnest. */
function byColumn(values: readonly (readonly unknown[])[], width: number): unknown[][] {
  const columns: unknown[][] = Array.from({ length: width }, () => []);
  for (const row of values) for (const [i, v] of row.entries()) columns[i]!.push(v);
  return columns;
}

export class PgUsageHistory implements UsageHistoryStore {
  constructor(private readonly t: PgTransactions) {}

  async add(rows: readonly UsageRow[], hours: readonly HourRow[] = []): Promise<void> {
    if (rows.length === 0 && hours.length === 0) return;
    const units = unitAmountValues(rows);
    const params = byColumn(
      rows.map((r) => [r.accountId, r.day, r.keyId, r.tool, r.surface, ...usageCountValues(r)]),
      11,
    );
    if (hours.length > 0)
      params.push(
        ...byColumn(
          hours.map((h) => [h.accountId, h.day, h.hour, h.calls, h.tokens, h.failed]),
          6,
        ),
      );
    if (units.length > 0) params.push(...byColumn(units, 7));
    const sql = ADD_STATEMENTS[hours.length > 0 ? 1 : 0][units.length > 0 ? 1 : 0];
    await guard(() => this.t.pool.query(sql, params));
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
    const params = [accountId, from, to];
    const [rows, units] = await guard(() =>
      Promise.all([
        this.t.all<UsageGroupRow>(
          `SELECT ${col} AS grp, ${USAGE_SUMS} FROM usage_daily
           WHERE account_id = $1 AND day >= $2 AND day <= $3 GROUP BY ${col} ORDER BY ${col}`,
          params,
        ),
        this.t.all<UnitSumRow>(unitSumsQuery(by, '$1', '$2', '$3'), params),
      ]),
    );
    return withUnits(rows.map(toUsageGroup), units);
  }

  async prune(day: string): Promise<number> {
    const res = await guard(() =>
      this.t.pool.query(
        'WITH units AS (DELETE FROM usage_daily_units WHERE day < $1) DELETE FROM usage_daily WHERE day < $1',
        [day],
      ),
    );
    return res.rowCount ?? 0;
  }
}
