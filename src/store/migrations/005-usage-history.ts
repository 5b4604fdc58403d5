/**
 * @module Migration 005: the per-day usage rollup (calls, tokens, records, with and without data,
 * failed; per account, day, key, tool and surface), which servers add to with additive upserts; and
 * billing periods: a plan may be a monthly subscription, and an account's period anchors at when it
 * joined its plan (`plan_since`, the creation time for the accounts already there). The two default
 * plans named as subscriptions become monthly subscriptions.
 */
import type { Migration } from './index.js';

const rollup = (integer: string, withoutRowid: string) => `
    CREATE TABLE usage_daily (
      account_id    TEXT NOT NULL,
      day           TEXT NOT NULL,
      key_id        TEXT NOT NULL,
      tool          TEXT NOT NULL,
      surface       TEXT NOT NULL,
      calls         ${integer} NOT NULL DEFAULT 0,
      tokens        ${integer} NOT NULL DEFAULT 0,
      records       ${integer} NOT NULL DEFAULT 0,
      with_data     ${integer} NOT NULL DEFAULT 0,
      without_data  ${integer} NOT NULL DEFAULT 0,
      failed        ${integer} NOT NULL DEFAULT 0,
      PRIMARY KEY (account_id, day, key_id, tool, surface)
    )${withoutRowid};
    CREATE INDEX usage_daily_day ON usage_daily (day);
    ALTER TABLE plans ADD COLUMN subscription TEXT CHECK (subscription IN ('monthly'));
    UPDATE plans SET subscription = 'monthly' WHERE id IN ('subscription_27', 'subscription_97');
    ALTER TABLE accounts ADD COLUMN plan_since ${integer};
    UPDATE accounts SET plan_since = created_at;
  `;

export const usageHistory: Migration = {
  version: 5,
  name: 'usage-history',
  sqlite: rollup('INTEGER', ' WITHOUT ROWID'),
  postgres: rollup('BIGINT', ''),
};
