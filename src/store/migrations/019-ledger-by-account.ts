/**
 * @module Migration 019: what each ledger entry costs to write. The entries are read by account, in
 * id order (a page of an account's ledger, a key looked up within an account), never by id alone:
 * the primary key becomes `(account_id, id)` and the separate `(account_id, id)` index goes, one
 * index fewer per entry (on SQLite the table is that key, WITHOUT ROWID: a charge writes one tree,
 * not three). The foreign key to `accounts` goes too: its check ran a lookup per entry, and each
 * writer of an entry has just updated, in the same transaction, the account row the entry names
 * (its balance, found or refused), while accounts are never deleted. SQLite rebuilds the table, its
 * rows copied in one transaction, as migration 008 did.
 */
import type { Migration } from './index.js';

const COLUMNS =
  'id, account_id, kind, amount, delta, balance_after, reason, idempotency_key, request_hash, created_at';

export const ledgerByAccount: Migration = {
  version: 19,
  name: 'ledger-by-account',
  sqlite: `
    CREATE TABLE token_ledger_019 (
      id               TEXT NOT NULL,
      account_id       TEXT NOT NULL,
      kind             TEXT NOT NULL CHECK (kind IN ('grant', 'charge', 'adjust')),
      amount           INTEGER NOT NULL,
      delta            INTEGER NOT NULL,
      balance_after    INTEGER NOT NULL CHECK (balance_after >= 0),
      reason           TEXT,
      idempotency_key  TEXT,
      request_hash     TEXT NOT NULL,
      created_at       INTEGER NOT NULL,
      PRIMARY KEY (account_id, id)
    ) WITHOUT ROWID;
    INSERT INTO token_ledger_019 (${COLUMNS}) SELECT ${COLUMNS} FROM token_ledger ORDER BY account_id, id;
    DROP TABLE token_ledger;
    ALTER TABLE token_ledger_019 RENAME TO token_ledger;
    CREATE UNIQUE INDEX token_ledger_idempotency ON token_ledger (account_id, idempotency_key)
      WHERE idempotency_key IS NOT NULL;
  `,
  postgres: `
    ALTER TABLE token_ledger DROP CONSTRAINT token_ledger_account_id_fkey;
    DROP INDEX token_ledger_account;
    ALTER TABLE token_ledger DROP CONSTRAINT token_ledger_pkey;
    ALTER TABLE token_ledger ADD CONSTRAINT token_ledger_pkey PRIMARY KEY (account_id, id);
  `,
};
