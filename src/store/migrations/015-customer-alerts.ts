/**
 * @module Migration 015: customer alerts. Each user may turn the alert mails off (on unless they
 * do); each alert event is given, when the webhooks fan it out, a mail per owner of its account who
 * wants them, with its schedule and a lease so that one server at a time sends it. The mail keeps
 * the event's type and body: the webhook outbox prunes its events on its own schedule.
 */
import type { Migration } from './index.js';

const customerAlerts = (integer: string, on: string) => `
    ALTER TABLE users ADD COLUMN alert_mails ${on};
    CREATE TABLE alert_mails (
      id               TEXT PRIMARY KEY,
      event_id         TEXT NOT NULL,
      user_id          TEXT NOT NULL,
      account_id       TEXT NOT NULL,
      type             TEXT NOT NULL,
      body             TEXT NOT NULL,
      event_at         ${integer} NOT NULL,
      status           TEXT NOT NULL CHECK (status IN ('pending', 'sent', 'failed', 'skipped')),
      attempts         ${integer} NOT NULL DEFAULT 0,
      next_attempt_at  ${integer},
      lease_token      TEXT,
      lease_until      ${integer},
      last_error       TEXT,
      created_at       ${integer} NOT NULL,
      updated_at       ${integer} NOT NULL,
      UNIQUE (event_id, user_id)
    );
    CREATE INDEX alert_mails_due ON alert_mails (next_attempt_at) WHERE status = 'pending';
    CREATE INDEX alert_mails_created ON alert_mails (created_at);
  `;

export const customerAlertsMigration: Migration = {
  version: 15,
  name: 'customer-alerts',
  sqlite: customerAlerts('INTEGER', 'INTEGER NOT NULL DEFAULT 1'),
  postgres: customerAlerts('BIGINT', 'BOOLEAN NOT NULL DEFAULT true'),
};
