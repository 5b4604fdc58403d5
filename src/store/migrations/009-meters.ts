/**
 * @module Migration 009: meters of the operator's own. SQLite's windows move from a column triple
 * per known window (migration 003) to one JSON array per account and category (`fair_use_state`),
 * so a plan's new category, unit or window needs no schema change. PostgreSQL's windows are already
 * an array on the account (migration 007); there, plans' limits become JSON (not JSONB), which keeps
 * the plan's order of categories, units and windows (the order get_account lists them in), and the
 * plans written before it (every one of the default shape) are rewritten in the spec's order.
 */
import type { Migration } from './index.js';

/** A window of a migration-003 row as `[unit, window, startedAt, endsAt, used]`, when it was started. */
const started = (unit: string, window: string, k: number) => {
  const c = `${unit}_${window}`;
  return `SELECT account_id, category, ${k} AS k, json_array('${unit}', '${window}', ${c}_start, ${c}_end, ${c}_used) AS w
      FROM fair_use WHERE ${c}_start IS NOT NULL`;
};

/** The default shape, member by member, in the spec's order. */
const category = (c: string) =>
  `'${c}', json_build_object(
     'records', json_build_object('5h', limits->'${c}'->'records'->'5h', '1w', limits->'${c}'->'records'->'1w'),
     'requests', json_build_object('5h', limits->'${c}'->'requests'->'5h'))`;

export const meters: Migration = {
  version: 9,
  name: 'meters',
  sqlite: `
    CREATE TABLE fair_use_state (
      account_id  TEXT NOT NULL REFERENCES accounts (id),
      category    TEXT NOT NULL,
      windows     TEXT NOT NULL,
      PRIMARY KEY (account_id, category)
    ) WITHOUT ROWID;
    INSERT INTO fair_use_state (account_id, category, windows)
      SELECT account_id, category, json_group_array(json(w)) FROM (
        ${started('records', '1w', 1)}
        UNION ALL ${started('records', '5h', 2)}
        UNION ALL ${started('requests', '5h', 3)}
        ORDER BY account_id, category, k)
      GROUP BY account_id, category;
    DROP TABLE fair_use;
  `,
  postgres: `
    ALTER TABLE plans ALTER COLUMN limits TYPE json USING json_build_object(${category('enrich')}, ${category('search')});
  `,
};
