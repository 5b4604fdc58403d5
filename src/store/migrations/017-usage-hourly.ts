/**
 * @module Migration 017: usage by the hour, for the console's view of a day. One row per account and
 * UTC hour (calls, tokens, failed), added to by the same flushes as the daily rollup, in the same
 * transaction; only the last days are kept (HOURLY_RETENTION_DAYS), so the table stays small, and
 * it has no index beyond its key: pruning it once an hour reads a few days of rows.
 */
import type { Migration } from './index.js';

const hourly = (integer: string, withoutRowid: string) => `
    CREATE TABLE usage_hourly (
      account_id  TEXT NOT NULL,
      day         TEXT NOT NULL,
      hour        INTEGER NOT NULL CHECK (hour BETWEEN 0 AND 23),
      calls       ${integer} NOT NULL DEFAULT 0,
      tokens      ${integer} NOT NULL DEFAULT 0,
      failed      ${integer} NOT NULL DEFAULT 0,
      PRIMARY KEY (account_id, day, hour)
    )${withoutRowid};
  `;

export const usageHourly: Migration = {
  version: 17,
  name: 'usage-hourly',
  sqlite: hourly('INTEGER', ' WITHOUT ROWID'),
  postgres: hourly('BIGINT', ''),
};
