/**
 * @module Migration 012: what the OAuth authorization server keeps (src/oauth/adapter.ts): one
 * table of the library's models by name and id. Every id that works as a credential (tokens,
 * codes, sessions, interactions) is stored only as a hash; `grant_id` lets a grant's tokens be
 * revoked together, `uid` finds a session, and `expires_at` lets old rows be pruned.
 */
import type { Migration } from './index.js';

const oauthModels = (integer: string, withoutRowid: string) => `
    CREATE TABLE oauth_models (
      model        TEXT NOT NULL,
      id           TEXT NOT NULL,
      payload      TEXT NOT NULL,
      grant_id     TEXT,
      client_id    TEXT,
      uid          TEXT,
      created_at   ${integer} NOT NULL,
      expires_at   ${integer},
      consumed_at  ${integer},
      PRIMARY KEY (model, id)
    )${withoutRowid};
    CREATE INDEX oauth_models_grant ON oauth_models (grant_id) WHERE grant_id IS NOT NULL;
    CREATE INDEX oauth_models_uid ON oauth_models (uid) WHERE uid IS NOT NULL;
    CREATE INDEX oauth_models_expiry ON oauth_models (expires_at) WHERE expires_at IS NOT NULL;
  `;

export const oauth: Migration = {
  version: 12,
  name: 'oauth',
  sqlite: oauthModels('INTEGER', ' WITHOUT ROWID'),
  postgres: oauthModels('BIGINT', ''),
};
