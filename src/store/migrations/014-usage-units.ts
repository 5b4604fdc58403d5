/**
 * @module Migration 014: the usage rollup keeps units apart. The amounts of tools counting another
 * unit than records (pages, messages) go to their own rows, by unit, beside the day's counts;
 * `usage_daily.records` keeps records only. Until now every unit was added to `records`: the rows
 * of the tools the catalogue meters in another unit move there (the unit a tool has now is the
 * best knowledge of what it counted: a tool's unit is rarely changed).
 */
import type { Migration } from './index.js';

const table = (integer: string, withoutRowid: string) => `
    CREATE TABLE usage_daily_units (
      account_id  TEXT NOT NULL,
      day         TEXT NOT NULL,
      key_id      TEXT NOT NULL,
      tool        TEXT NOT NULL,
      surface     TEXT NOT NULL,
      unit        TEXT NOT NULL,
      amount      ${integer} NOT NULL DEFAULT 0,
      PRIMARY KEY (account_id, day, key_id, tool, surface, unit)
    )${withoutRowid};
    CREATE INDEX usage_daily_units_day ON usage_daily_units (day);`;

/** The rows of tools metered in another unit than records moved to their unit; `unitOf` reads a definition's. */
const moved = (unitOf: string) => `
    INSERT INTO usage_daily_units (account_id, day, key_id, tool, surface, unit, amount)
      SELECT d.account_id, d.day, d.key_id, d.tool, d.surface, ${unitOf}, d.records
      FROM usage_daily d JOIN tools t ON t.name = d.tool
      WHERE d.records > 0 AND ${unitOf} IS NOT NULL AND ${unitOf} <> 'records';
    UPDATE usage_daily SET records = 0
      WHERE records > 0 AND tool IN (
        SELECT t.name FROM tools t WHERE ${unitOf} IS NOT NULL AND ${unitOf} <> 'records');`;

export const usageUnits: Migration = {
  version: 14,
  name: 'usage-units',
  sqlite: `${table('INTEGER', ' WITHOUT ROWID')}${moved("json_extract(t.definition, '$.metering.unit')")}`,
  // Definitions are text (migration 004): read as JSON here only.
  postgres: `${table('BIGINT', '')}${moved("(t.definition::json -> 'metering' ->> 'unit')")}`,
};
