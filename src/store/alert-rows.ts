/** @module The alert mails' rows (migration 015) and what both stores make of them. */
import { crossingOf } from '../domain/alerts.js';
import type { AlertMailRecord, AlertMailStatus, DueAlertMail } from './alerts-store.js';
import type { EventRow } from './webhook-rows.js';

export interface AlertMailRow {
  id: string;
  event_id: string;
  user_id: string;
  account_id: string;
  type: string;
  status: string;
  attempts: number | string;
  next_attempt_at: number | string | null;
  last_error: string | null;
  created_at: number | string;
  updated_at: number | string;
}

/** A leased mail joined with its user and account as they are now (null: gone). */
export interface DueAlertRow {
  id: string;
  type: string;
  body: string;
  event_at: number | string;
  attempts: number | string;
  account_id: string;
  email: string | null;
  role: string | null;
  alert_mails: number | boolean | null;
  account_name: string | null;
}

/** The columns a claim reads: the mail, its user and its account, as they are at the claim. */
export const DUE_ALERT_SELECT = `SELECT m.id, m.type, m.body, m.event_at, m.attempts, m.account_id,
  u.email, u.role, u.alert_mails, a.name AS account_name
  FROM alert_mails m LEFT JOIN users u ON u.id = m.user_id LEFT JOIN accounts a ON a.id = m.account_id`;

export const toAlertMail = (r: AlertMailRow): AlertMailRecord => ({
  id: r.id,
  eventId: r.event_id,
  userId: r.user_id,
  accountId: r.account_id,
  type: r.type,
  status: r.status as AlertMailStatus,
  attempts: Number(r.attempts),
  nextAttemptAt: r.next_attempt_at === null ? null : Number(r.next_attempt_at),
  lastError: r.last_error,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

/**
 * The mail to send, or undefined when it is no longer to be sent: its user gone, no owner now, the
 * mails turned off since it was queued, its account gone, or its crossing older than `staleBefore`.
 */
export function toDueAlert(r: DueAlertRow, staleBefore: number): DueAlertMail | undefined {
  const at = Number(r.event_at);
  if (r.email === null || r.account_name === null || r.role !== 'owner') return undefined;
  if (!r.alert_mails || at < staleBefore) return undefined;
  const crossing = crossingOf(r.type, (JSON.parse(r.body) as { data: Record<string, unknown> }).data);
  if (!crossing) return undefined;
  return {
    alert: { id: r.id, to: r.email, accountId: r.account_id, accountName: r.account_name, at, crossing },
    attempts: Number(r.attempts),
  };
}

const MAILED_TYPES = new Set(['fair_use.threshold', 'tokens.low_balance', 'tokens.depleted']);

/** The events of a fan-out that owners are mailed about: each with its account. */
export function alertEvents(events: readonly EventRow[]): (EventRow & { account_id: string })[] {
  return events.filter(
    (e): e is EventRow & { account_id: string } =>
      e.account_id !== null &&
      MAILED_TYPES.has(e.type) &&
      crossingOf(e.type, (JSON.parse(e.body) as { data: Record<string, unknown> }).data) !== undefined,
  );
}
