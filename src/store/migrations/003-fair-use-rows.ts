/**
 * @module Migration 003, SQLite: an account's windows in a category as one row (`fair_use`), each
 * window three columns (`<unit>_<window>_start`, `_end`, `_used`; start and end NULL until the window
 * first starts), instead of a row per window. A consumption is then one conditional upsert of one
 * row, where it was three rows of one upsert, and the write costs far fewer instructions
 * (docs/performance.md). The windows are the spec's (records 5h and 1w, requests 5h, in each
 * category), the same set the answers are shaped by.
 *
 * PostgreSQL's windows are moved by migration 007 instead (onto the account's row, where its group
 * commit's lock already is). The version is recorded on both backends, so the history stays one list.
 */
import type { Migration } from './index.js';

/** `<unit>_<window>` of each window, in the windows' key order (unit, then window). */
const WINDOWS = ['records_1w', 'records_5h', 'requests_5h'] as const;

const columns = WINDOWS.map(
  (w) => `${w}_start INTEGER, ${w}_end INTEGER, ${w}_used INTEGER NOT NULL DEFAULT 0 CHECK (${w}_used >= 0),`,
).join('\n      ');

const pick = (w: string, col: string) => `max(CASE WHEN unit || '_' || win = '${w}' THEN ${col} END)`;

export const fairUseRows: Migration = {
  version: 3,
  name: 'fair-use-rows',
  sqlite: `
    CREATE TABLE fair_use (
      account_id  TEXT NOT NULL REFERENCES accounts (id),
      category    TEXT NOT NULL,
      ${columns}
      PRIMARY KEY (account_id, category)
    ) WITHOUT ROWID;
    INSERT INTO fair_use (account_id, category, ${WINDOWS.map((w) => `${w}_start, ${w}_end, ${w}_used`).join(', ')})
      SELECT account_id, category, ${WINDOWS.map((w) => `${pick(w, 'started_at')}, ${pick(w, 'ends_at')}, coalesce(${pick(w, 'used')}, 0)`).join(', ')}
      FROM fair_use_windows GROUP BY account_id, category;
    DROP TABLE fair_use_windows;
  `,
  postgres: null,
};
