/** @module Migration 001: the initial schema, in both dialects. */
import type { Migration } from './index.js';

export const initial: Migration = {
  version: 1,
  name: 'initial',
  sqlite: `
    CREATE TABLE plans (
      id          TEXT PRIMARY KEY,
      unlimited   INTEGER NOT NULL CHECK (unlimited IN (0, 1)),
      limits      TEXT NOT NULL,
      created_at  INTEGER NOT NULL,
      updated_at  INTEGER NOT NULL
    );
    CREATE TABLE accounts (
      id                  TEXT PRIMARY KEY,
      name                TEXT NOT NULL,
      plan_id             TEXT NOT NULL REFERENCES plans (id),
      status              TEXT NOT NULL CHECK (status IN ('active', 'suspended', 'closed')),
      unlimited_override  INTEGER CHECK (unlimited_override IN (0, 1)),
      token_balance       INTEGER NOT NULL DEFAULT 0 CHECK (token_balance >= 0),
      created_at          INTEGER NOT NULL,
      updated_at          INTEGER NOT NULL
    );
    CREATE TABLE api_keys (
      id            TEXT PRIMARY KEY,
      account_id    TEXT NOT NULL REFERENCES accounts (id),
      name          TEXT,
      digest        TEXT NOT NULL UNIQUE,
      hint          TEXT NOT NULL,
      created_at    INTEGER NOT NULL,
      revoked_at    INTEGER,
      last_used_at  INTEGER
    );
    CREATE INDEX api_keys_account ON api_keys (account_id);
    CREATE TABLE users (
      id          TEXT PRIMARY KEY,
      account_id  TEXT NOT NULL REFERENCES accounts (id),
      email       TEXT NOT NULL,
      role        TEXT NOT NULL CHECK (role IN ('owner', 'member')),
      created_at  INTEGER NOT NULL,
      UNIQUE (account_id, email)
    );
    CREATE TABLE token_ledger (
      id               TEXT PRIMARY KEY,
      account_id       TEXT NOT NULL REFERENCES accounts (id),
      kind             TEXT NOT NULL CHECK (kind IN ('grant', 'charge', 'adjust')),
      amount           INTEGER NOT NULL,
      delta            INTEGER NOT NULL,
      balance_after    INTEGER NOT NULL CHECK (balance_after >= 0),
      reason           TEXT,
      idempotency_key  TEXT,
      request_hash     TEXT NOT NULL,
      created_at       INTEGER NOT NULL,
      UNIQUE (account_id, idempotency_key)
    );
    CREATE INDEX token_ledger_account ON token_ledger (account_id, id);
    CREATE TABLE fair_use_windows (
      account_id  TEXT NOT NULL REFERENCES accounts (id),
      category    TEXT NOT NULL,
      unit        TEXT NOT NULL,
      win         TEXT NOT NULL,
      started_at  INTEGER NOT NULL,
      ends_at     INTEGER NOT NULL,
      used        INTEGER NOT NULL CHECK (used >= 0),
      PRIMARY KEY (account_id, category, unit, win)
    ) WITHOUT ROWID;
    CREATE TABLE usage_idempotency (
      account_id       TEXT NOT NULL REFERENCES accounts (id),
      idempotency_key  TEXT NOT NULL,
      request_hash     TEXT NOT NULL,
      response         TEXT NOT NULL,
      created_at       INTEGER NOT NULL,
      PRIMARY KEY (account_id, idempotency_key)
    ) WITHOUT ROWID;
  `,
  postgres: `
    CREATE TABLE plans (
      id          TEXT PRIMARY KEY,
      unlimited   BOOLEAN NOT NULL,
      limits      JSONB NOT NULL,
      created_at  BIGINT NOT NULL,
      updated_at  BIGINT NOT NULL
    );
    CREATE TABLE accounts (
      id                  TEXT PRIMARY KEY,
      name                TEXT NOT NULL,
      plan_id             TEXT NOT NULL REFERENCES plans (id),
      status              TEXT NOT NULL CHECK (status IN ('active', 'suspended', 'closed')),
      unlimited_override  BOOLEAN,
      token_balance       BIGINT NOT NULL DEFAULT 0 CHECK (token_balance >= 0),
      created_at          BIGINT NOT NULL,
      updated_at          BIGINT NOT NULL
    );
    CREATE TABLE api_keys (
      id            TEXT PRIMARY KEY,
      account_id    TEXT NOT NULL REFERENCES accounts (id),
      name          TEXT,
      digest        TEXT NOT NULL UNIQUE,
      hint          TEXT NOT NULL,
      created_at    BIGINT NOT NULL,
      revoked_at    BIGINT,
      last_used_at  BIGINT
    );
    CREATE INDEX api_keys_account ON api_keys (account_id);
    CREATE TABLE users (
      id          TEXT PRIMARY KEY,
      account_id  TEXT NOT NULL REFERENCES accounts (id),
      email       TEXT NOT NULL,
      role        TEXT NOT NULL CHECK (role IN ('owner', 'member')),
      created_at  BIGINT NOT NULL,
      UNIQUE (account_id, email)
    );
    CREATE TABLE token_ledger (
      id               TEXT PRIMARY KEY,
      account_id       TEXT NOT NULL REFERENCES accounts (id),
      kind             TEXT NOT NULL CHECK (kind IN ('grant', 'charge', 'adjust')),
      amount           BIGINT NOT NULL,
      delta            BIGINT NOT NULL,
      balance_after    BIGINT NOT NULL CHECK (balance_after >= 0),
      reason           TEXT,
      idempotency_key  TEXT,
      request_hash     TEXT NOT NULL,
      created_at       BIGINT NOT NULL,
      UNIQUE (account_id, idempotency_key)
    );
    CREATE INDEX token_ledger_account ON token_ledger (account_id, id);
    CREATE TABLE fair_use_windows (
      account_id  TEXT NOT NULL REFERENCES accounts (id),
      category    TEXT NOT NULL,
      unit        TEXT NOT NULL,
      win         TEXT NOT NULL,
      started_at  BIGINT NOT NULL,
      ends_at     BIGINT NOT NULL,
      used        BIGINT NOT NULL CHECK (used >= 0),
      PRIMARY KEY (account_id, category, unit, win)
    );
    CREATE TABLE usage_idempotency (
      account_id       TEXT NOT NULL REFERENCES accounts (id),
      idempotency_key  TEXT NOT NULL,
      request_hash     TEXT NOT NULL,
      response         TEXT NOT NULL,
      created_at       BIGINT NOT NULL,
      PRIMARY KEY (account_id, idempotency_key)
    );
  `,
};
