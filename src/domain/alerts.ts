/**
 * @module Customer alerts: the crossings the owners of an account are mailed about (a fair-use
 * window at 80% and 100%, a balance running low or out: the webhooks' own events), what a mail is
 * made of, and the schedule of its attempts. Recording, leasing and sending live in the store and
 * src/webhooks/alert-mailer.ts; the words of the mail in the console.
 */
import type { EpochSeconds } from './clock.js';

/** The percentages of each fair-use window the owners are mailed at, whatever the webhooks want. */
export const ALERT_THRESHOLDS: readonly number[] = Object.freeze([80, 100]);

/** What crossed, read from the event's data (the webhook's body: one source for both). */
export type Crossing =
  | {
      type: 'fair_use.threshold';
      category: string;
      unit: string;
      window: string;
      threshold: number;
      limit: number;
      used: number;
      remaining: number;
      /** ISO 8601 (the event's `resets_at`); null when the window was not known to the write. */
      resetsAt: string | null;
    }
  | { type: 'tokens.low_balance'; balance: number; lowBalance: number }
  | { type: 'tokens.depleted' };

/**
 * The crossing an event of this type and data is, when it is one the owners are mailed about:
 * every balance event, and a window's threshold event at 80 or 100 only (an endpoint's own
 * thresholds, 50 say, are the operator's business).
 */
export function crossingOf(type: string, data: Record<string, unknown>): Crossing | undefined {
  if (type === 'tokens.depleted') return { type };
  if (type === 'tokens.low_balance')
    return { type, balance: Number(data.balance), lowBalance: Number(data.low_balance) };
  if (type !== 'fair_use.threshold' || !ALERT_THRESHOLDS.includes(data.threshold as number)) return undefined;
  return {
    type,
    category: String(data.category),
    unit: String(data.unit),
    window: String(data.window),
    threshold: Number(data.threshold),
    limit: Number(data.limit),
    used: Number(data.used),
    remaining: Number(data.remaining),
    resetsAt: typeof data.resets_at === 'string' ? data.resets_at : null,
  };
}

/** Whether an event is mailed to the owners of its account. */
export const isAlertEvent = (type: string, data: Record<string, unknown>): boolean =>
  crossingOf(type, data) !== undefined;

/** One mail to write: to whom, about which account, what crossed and when. */
export interface CustomerAlert {
  /** `alm_…`: the mail's own id (one per crossing and owner). */
  id: string;
  to: string;
  accountId: string;
  accountName: string;
  at: EpochSeconds;
  crossing: Crossing;
}

/**
 * Seconds to wait after a failed attempt `n` (1-based) before the next: 30 s, 5 min, 30 min, 2 h,
 * 6 h (some 8.5 h in all, mail servers being down for a while at most). Null: no more attempts.
 */
export const ALERT_RETRY_DELAYS_SECONDS: readonly number[] = [30, 300, 1800, 7200, 21600];

export function alertRetryDelay(failedAttempts: number): number | null {
  return ALERT_RETRY_DELAYS_SECONDS[failedAttempts - 1] ?? null;
}

/**
 * An alert not mailed within a day of its crossing is dropped: past that it tells of a state long
 * gone (alerts queued while no server mailed them, the console off, are not sent weeks later).
 */
export const ALERT_STALE_SECONDS = 86_400;
