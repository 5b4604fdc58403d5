/**
 * @module Migration 010, PostgreSQL: an account's windows (`accounts.fair_use`) become a JSON member
 * per category, each an array of `[unit, window, startedAt, endsAt, used]` in key order (as SQLite's
 * row per category, migration 009), instead of one array of every window. A consumption locks the
 * account's row as before, but reads (`fair_use -> category`) and writes (`fair_use || {category}`)
 * only the categories it consumes from: on a plan of many meters it no longer carries every window
 * of the account through the statements and the driver (docs/performance.md). SQLite: nothing to do.
 */
import type { Migration } from './index.js';

export const fairUseByCategory: Migration = {
  version: 10,
  name: 'fair-use-by-category',
  sqlite: null,
  postgres: `
    UPDATE accounts a SET fair_use = COALESCE(
      (SELECT jsonb_object_agg(g.category, g.windows) FROM (
         SELECT w->>'category' AS category,
                jsonb_agg(jsonb_build_array(w->'unit', w->'window', w->'startedAt', w->'endsAt', w->'used')
                  ORDER BY w->>'unit' COLLATE "C", w->>'window' COLLATE "C") AS windows
           FROM jsonb_array_elements(a.fair_use) w GROUP BY w->>'category') g),
      '{}'::jsonb)
      WHERE jsonb_typeof(a.fair_use) = 'array';
    ALTER TABLE accounts ALTER COLUMN fair_use SET DEFAULT '{}'::jsonb;
  `,
};
