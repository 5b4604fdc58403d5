/**
 * @module Migration 013: money through Stripe. Plans and token packs name the Stripe price that
 * sells them (one price, one plan or pack); an account keeps its Stripe customer and the state of
 * its subscription as last read from Stripe; every Stripe event received is kept once by id (the
 * row that makes it applied at most once, written with its effect); and each paid pack is kept by
 * its PaymentIntent, so that a refund finds what to take back.
 */
import type { Migration } from './index.js';

const payments = (integer: string, flag: string) => `
    ALTER TABLE plans ADD COLUMN stripe_price TEXT;
    ALTER TABLE plans ADD COLUMN period_tokens ${integer};
    CREATE UNIQUE INDEX plans_stripe_price ON plans (stripe_price) WHERE stripe_price IS NOT NULL;
    ALTER TABLE accounts ADD COLUMN stripe_customer TEXT;
    ALTER TABLE accounts ADD COLUMN stripe_subscription TEXT;
    ALTER TABLE accounts ADD COLUMN subscription_status TEXT;
    ALTER TABLE accounts ADD COLUMN stripe_price TEXT;
    ALTER TABLE accounts ADD COLUMN period_start ${integer};
    ALTER TABLE accounts ADD COLUMN period_end ${integer};
    ALTER TABLE accounts ADD COLUMN stripe_state_at ${integer};
    ALTER TABLE accounts ADD COLUMN suspended_for_payment ${flag};
    CREATE UNIQUE INDEX accounts_stripe_customer ON accounts (stripe_customer) WHERE stripe_customer IS NOT NULL;
    CREATE TABLE topups (
      id            TEXT PRIMARY KEY,
      tokens        ${integer} NOT NULL CHECK (tokens > 0),
      stripe_price  TEXT NOT NULL UNIQUE,
      created_at    ${integer} NOT NULL,
      updated_at    ${integer} NOT NULL
    );
    CREATE TABLE stripe_events (
      id           TEXT PRIMARY KEY,
      type         TEXT NOT NULL,
      account_id   TEXT,
      received_at  ${integer} NOT NULL,
      outcome      TEXT NOT NULL,
      detail       TEXT NOT NULL
    );
    CREATE INDEX stripe_events_account ON stripe_events (account_id, received_at);
    CREATE INDEX stripe_events_received ON stripe_events (received_at);
    CREATE TABLE stripe_payments (
      payment_intent  TEXT PRIMARY KEY,
      session_id      TEXT NOT NULL,
      account_id      TEXT NOT NULL REFERENCES accounts (id),
      topup_id        TEXT NOT NULL,
      tokens          ${integer} NOT NULL,
      created_at      ${integer} NOT NULL
    );
  `;

export const paymentsMigration: Migration = {
  version: 13,
  name: 'payments',
  sqlite: payments('INTEGER', 'INTEGER NOT NULL DEFAULT 0'),
  postgres: payments('BIGINT', 'BOOLEAN NOT NULL DEFAULT false'),
};
