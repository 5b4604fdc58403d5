/**
 * @module Migration 002: the audit trail. No foreign keys: an entry must outlive whatever it names,
 * and the action list is kept closed in the domain, not in a CHECK that a new action would have to
 * rebuild the table for.
 */
import type { Migration } from './index.js';

export const audit: Migration = {
  version: 2,
  name: 'audit',
  sqlite: `
    CREATE TABLE audit_log (
      id          TEXT PRIMARY KEY,
      at          INTEGER NOT NULL,
      actor       TEXT NOT NULL,
      action      TEXT NOT NULL,
      account_id  TEXT,
      target_id   TEXT,
      details     TEXT NOT NULL
    );
    CREATE INDEX audit_log_account ON audit_log (account_id, id);
  `,
  postgres: `
    CREATE TABLE audit_log (
      id          TEXT PRIMARY KEY,
      at          BIGINT NOT NULL,
      actor       TEXT NOT NULL,
      action      TEXT NOT NULL,
      account_id  TEXT,
      target_id   TEXT,
      details     JSONB NOT NULL
    );
    CREATE INDEX audit_log_account ON audit_log (account_id, id);
  `,
};
