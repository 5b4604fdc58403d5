/**
 * @module Migration 016: a plan's display name and description, what customers see in the console
 * instead of its id (`pro`, not `subscription_27`). Null: the id is shown.
 */
import type { Migration } from './index.js';

const planNames = `
    ALTER TABLE plans ADD COLUMN name TEXT;
    ALTER TABLE plans ADD COLUMN description TEXT;
  `;

export const planNamesMigration: Migration = {
  version: 16,
  name: 'plan-names',
  sqlite: planNames,
  postgres: planNames,
};
