/**
 * @module Customer alerts (migration 015): each user's choice to get the alert mails, and the mails
 * themselves, queued by the webhooks' fan-out (one per alert event and owner who wants them) and
 * leased to one server at a time to send.
 */
import type { CustomerAlert } from '../domain/alerts.js';
import type { AuditEntry } from '../domain/audit.js';
import type { EpochSeconds } from '../domain/clock.js';
import type { Page } from './page.js';

export const ALERT_MAIL_STATUSES = ['pending', 'sent', 'failed', 'skipped'] as const;
export type AlertMailStatus = (typeof ALERT_MAIL_STATUSES)[number];

/** One mail as stored (tests, and what an operator may want to look at). */
export interface AlertMailRecord {
  id: string;
  eventId: string;
  userId: string;
  accountId: string;
  type: string;
  status: AlertMailStatus;
  attempts: number;
  nextAttemptAt: EpochSeconds | null;
  lastError: string | null;
  createdAt: EpochSeconds;
  updatedAt: EpochSeconds;
}

/** A mail due, leased to the caller: what to write, and how many attempts it had. */
export interface DueAlertMail {
  alert: CustomerAlert;
  attempts: number;
}

/** What became of an attempt: sent, failed for good, or to be tried again at `nextAttemptAt`. */
export interface AlertMailResult {
  status: 'sent' | 'pending' | 'failed';
  nextAttemptAt: EpochSeconds | null;
  error: string | null;
}

export interface AlertStore {
  /** Whether the user gets alert mails (yes unless they turned them off); undefined: no such user. */
  mailsOn(userId: string): Promise<boolean | undefined>;
  /**
   * Turns the user's alert mails on or off; false when there is no such user. Audited only when
   * the choice changed.
   */
  setMailsOn(userId: string, on: boolean, audit?: AuditEntry): Promise<boolean>;
  /**
   * Leases up to `limit` due mails (pending, due by `now`, not leased or their lease run out) to
   * `leaseToken` until `leaseUntil`, each to one caller only, however many servers ask at once.
   * A mail whose user is gone, is no owner any more, turned the mails off since, or whose crossing
   * is older than `staleBefore` is marked `skipped` in the same transaction and not returned.
   */
  claim(
    now: EpochSeconds,
    leaseToken: string,
    leaseUntil: EpochSeconds,
    limit: number,
    staleBefore: EpochSeconds,
  ): Promise<DueAlertMail[]>;
  /** Records an attempt's result, only while the lease is still the caller's; whether it was. */
  settle(id: string, leaseToken: string, result: AlertMailResult, now: EpochSeconds): Promise<boolean>;
  /** Every mail queued, oldest first. */
  list(page: Page): Promise<AlertMailRecord[]>;
}
