/**
 * @module Migration 011: the console's own data. Sign-in links (only a hash of the token kept, single
 * use, short-lived) and sessions (only a hash of the cookie value kept), and an index on users' email:
 * a person signing in is looked up by email across accounts.
 */
import type { Migration } from './index.js';

const consoleTables = (integer: string) => `
    CREATE TABLE console_links (
      token_hash  TEXT PRIMARY KEY,
      email       TEXT NOT NULL,
      account_id  TEXT REFERENCES accounts (id),
      purpose     TEXT NOT NULL CHECK (purpose IN ('sign-in', 'invite')),
      return_to   TEXT,
      created_at  ${integer} NOT NULL,
      expires_at  ${integer} NOT NULL,
      used_at     ${integer}
    );
    CREATE INDEX console_links_expiry ON console_links (expires_at);
    CREATE TABLE console_sessions (
      id            TEXT PRIMARY KEY,
      token_hash    TEXT NOT NULL UNIQUE,
      email         TEXT NOT NULL,
      created_at    ${integer} NOT NULL,
      last_seen_at  ${integer} NOT NULL
    );
    CREATE INDEX console_sessions_email ON console_sessions (email);
    CREATE INDEX users_email ON users (email);
  `;

export const consoleMigration: Migration = {
  version: 11,
  name: 'console',
  sqlite: consoleTables('INTEGER'),
  postgres: consoleTables('BIGINT'),
};
