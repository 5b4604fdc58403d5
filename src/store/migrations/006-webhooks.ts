/**
 * @module Migration 006: signed webhooks. Endpoints (global or one account's, with the events and
 * thresholds they want); the outbox of events, each written in the transaction of the change that
 * caused it and fanned out to the endpoints that want it; a delivery per event and endpoint, with
 * its schedule and a lease so that one server at a time attempts it. Accounts get the balance under
 * which `tokens.low_balance` fires.
 */
import type { Migration } from './index.js';

const webhooks = (integer: string) => `
    CREATE TABLE webhook_endpoints (
      id          TEXT PRIMARY KEY,
      url         TEXT NOT NULL,
      secret      TEXT NOT NULL,
      account_id  TEXT REFERENCES accounts (id),
      events      TEXT NOT NULL,
      thresholds  TEXT NOT NULL,
      created_at  ${integer} NOT NULL
    );
    CREATE TABLE webhook_events (
      id          TEXT PRIMARY KEY,
      type        TEXT NOT NULL,
      account_id  TEXT,
      body        TEXT NOT NULL,
      created_at  ${integer} NOT NULL,
      fanned_out  ${integer} NOT NULL DEFAULT 0
    );
    CREATE INDEX webhook_events_waiting ON webhook_events (id) WHERE fanned_out = 0;
    CREATE TABLE webhook_deliveries (
      id               TEXT PRIMARY KEY,
      endpoint_id      TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
      event_id         TEXT NOT NULL REFERENCES webhook_events (id),
      status           TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
      attempts         ${integer} NOT NULL DEFAULT 0,
      next_attempt_at  ${integer},
      lease_token      TEXT,
      lease_until      ${integer},
      last_status_code ${integer},
      last_error       TEXT,
      created_at       ${integer} NOT NULL,
      updated_at       ${integer} NOT NULL
    );
    CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
    CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id);
    CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);
    ALTER TABLE accounts ADD COLUMN low_balance ${integer};
  `;

export const webhooksMigration: Migration = {
  version: 6,
  name: 'webhooks',
  sqlite: webhooks('INTEGER'),
  postgres: webhooks('BIGINT'),
};
