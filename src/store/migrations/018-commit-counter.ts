/**
 * @module Migration 018: a one-row counter that every commit of a SQLite serving process updates
 * once it writes from two connections (the event loop's and the writer thread's), so that each of
 * its commits moves the WAL index's transaction count exactly once and another process's commits
 * can be told from its own (sqlite/own-commits.ts). PostgreSQL has nothing to count.
 */
import type { Migration } from './index.js';

export const commitCounter: Migration = {
  version: 18,
  name: 'commit-counter',
  sqlite: `
    CREATE TABLE commit_counter (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
    INSERT INTO commit_counter (id, n) VALUES (1, 0);
  `,
  postgres: null,
};
