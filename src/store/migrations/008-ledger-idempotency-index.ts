/**
 * @module Migration 008: a ledger entry's idempotency key is unique per account through a partial
 * index, of the entries that have a key, instead of a constraint over every entry. A metered tool's
 * charge has no key, and each one added an entry at its account's place in that index: a page
 * written per charge on SQLite, about a third of a charge's cost in the group commit
 * (docs/performance.md). The lookups by key (`idempotency_key = ?`) use the partial index.
 *
 * SQLite cannot drop a table's own constraint, so the table is rebuilt as it was without it, its
 * rows copied in one transaction; PostgreSQL drops the constraint. Processes of the previous version
 * go on working with the table after it.
 */
import type { Migration } from './index.js';

const COLUMNS =
  'id, account_id, kind, amount, delta, balance_after, reason, idempotency_key, request_hash, created_at';

const INDEX = `CREATE UNIQUE INDEX token_ledger_idempotency ON token_ledger (account_id, idempotency_key)
      WHERE idempotency_key IS NOT NULL;`;

export const ledgerIdempotencyIndex: Migration = {
  version: 8,
  name: 'ledger-idempotency-index',
  sqlite: `
    CREATE TABLE token_ledger_008 (
      id               TEXT PRIMARY KEY,
      account_id       TEXT NOT NULL REFERENCES accounts (id),
      kind             TEXT NOT NULL CHECK (kind IN ('grant', 'charge', 'adjust')),
      amount           INTEGER NOT NULL,
      delta            INTEGER NOT NULL,
      balance_after    INTEGER NOT NULL CHECK (balance_after >= 0),
      reason           TEXT,
      idempotency_key  TEXT,
      request_hash     TEXT NOT NULL,
      created_at       INTEGER NOT NULL
    );
    INSERT INTO token_ledger_008 (${COLUMNS}) SELECT ${COLUMNS} FROM token_ledger ORDER BY id;
    DROP TABLE token_ledger;
    ALTER TABLE token_ledger_008 RENAME TO token_ledger;
    CREATE INDEX token_ledger_account ON token_ledger (account_id, id);
    ${INDEX}
  `,
  postgres: `
    ALTER TABLE token_ledger DROP CONSTRAINT token_ledger_account_id_idempotency_key_key;
    ${INDEX}
  `,
};
