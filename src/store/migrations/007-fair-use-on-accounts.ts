/**
 * @module Migration 007, PostgreSQL: an account's fair-use windows move onto its own row
 * (`accounts.fair_use`, a JSONB array of the windows it has started, in key order) from a row per
 * window (`fair_use_windows`). A group commit already locks each account's row before it reads the
 * windows; with the windows in that row, the lock is the read, and the write is one UPDATE of the
 * rows it locked: a statement a batch fewer, no second table to probe per window, and about half of
 * PostgreSQL's CPU per consumption (docs/performance.md). Reads of the windows that
 * come after the lock see the latest committed row (a locking read returns the newest version),
 * which a separate table could not give in the same statement.
 *
 * SQLite keeps its row per account and category (migration 003): it costs instructions there, not
 * statements. The version is recorded on both backends, so the history stays one list.
 */
import type { Migration } from './index.js';

export const fairUseOnAccounts: Migration = {
  version: 7,
  name: 'fair-use-on-accounts',
  sqlite: null,
  postgres: `
    ALTER TABLE accounts ADD COLUMN fair_use JSONB NOT NULL DEFAULT '[]'::jsonb;
    UPDATE accounts a SET fair_use = w.windows
      FROM (SELECT account_id,
                   jsonb_agg(jsonb_build_object('category', category, 'unit', unit, 'window', win,
                     'startedAt', started_at, 'endsAt', ends_at, 'used', used)
                     ORDER BY category COLLATE "C", unit COLLATE "C", win COLLATE "C") AS windows
              FROM fair_use_windows WHERE ends_at > 0 GROUP BY account_id) w
      WHERE a.id = w.account_id;
    DROP TABLE fair_use_windows;
  `,
};
