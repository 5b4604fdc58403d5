/**
 * @module Money's data: token packs, each account's Stripe customer and subscription state, the
 * Stripe events received (each id kept once, in the transaction of its effect) and the packs paid.
 */
import type { AuditEntry } from '../domain/audit.js';
import type { EpochSeconds } from '../domain/clock.js';
import type { SubscriptionState, Topup } from '../domain/payments.js';
import type { LedgerAppend } from './ledger-store.js';

/** What became of a Stripe event. */
export type EventOutcome = 'applied' | 'no_effect' | 'unknown_customer' | 'unknown_price' | 'ignored';

/** A Stripe event as kept: what it was and what it did. */
export interface StripeEventRecord {
  id: string;
  type: string;
  accountId: string | null;
  receivedAt: EpochSeconds;
  outcome: EventOutcome;
  detail: string;
}

/** A paid pack, kept by its PaymentIntent so that a refund of it finds its tokens. */
export interface PackPayment {
  paymentIntent: string;
  sessionId: string;
  accountId: string;
  topupId: string;
  tokens: number;
}

/**
 * What an event (or an operator's sync) does to one account, applied in one transaction. Each part
 * says in `note` what it did, and carries the audit entry written only when it took effect.
 */
export interface PaymentChange {
  /** The event this is, applied at most once by id; absent for a sync (no event). */
  event?: { id: string; type: string; receivedAt: EpochSeconds };
  accountId: string;
  /** Tokens granted (a pack, a period): replayed, not granted again, when its idempotency key was used. */
  grant?: { entry: LedgerAppend; payment?: PackPayment; note: string; audit: AuditEntry };
  /** Takes a pack back: `entry.amount` (negative) at most, as far as the balance allows. */
  takeBack?: { entry: LedgerAppend; note: string; audit: AuditEntry };
  /**
   * The subscription's state, applied only when it was read after the state the account has,
   * and, for an ended subscription, only when it is the account's own (not one it replaced).
   */
  subscription?: {
    state: SubscriptionState;
    /** Whether the subscription serves (active, trialing, past_due, incomplete): it may replace another. */
    live: boolean;
    planId: string | undefined;
    status: 'suspend' | 'resume' | undefined;
    note: string;
    audit: AuditEntry;
  };
}

/** What `apply` did: nothing for an event already applied; else the outcome and detail kept with it. */
export type PaymentApplied = { kind: 'duplicate' } | { kind: 'done'; outcome: EventOutcome; detail: string };

export interface PaymentStore {
  listTopups(): Promise<Topup[]>;
  getTopup(id: string): Promise<Topup | undefined>;
  /** The pack or plan a Stripe price sells, if any. */
  priceUse(priceId: string): Promise<{ plan?: string; topup?: string }>;
  putTopup(topup: Topup, audit?: AuditEntry): Promise<void>;
  /** Audited only when there was one. */
  removeTopup(id: string, audit?: AuditEntry): Promise<Topup | undefined>;

  /**
   * Gives the account its Stripe customer unless it has one already; the account's customer after
   * (the first one kept: two servers making one at once agree on it). Undefined: no such account.
   */
  linkCustomer(accountId: string, customerId: string, audit?: AuditEntry): Promise<string | undefined>;
  accountOfCustomer(customerId: string): Promise<string | undefined>;
  paymentOf(paymentIntent: string): Promise<PackPayment | undefined>;

  /** Whether the event was applied already (a cheap look before any call to Stripe). */
  seen(eventId: string): Promise<boolean>;
  /**
   * Keeps an event that changes nothing (an unknown customer or price, a type not handled), once;
   * whether it was new.
   */
  note(record: StripeEventRecord): Promise<boolean>;
  /** Applies the change and keeps its event, in one transaction; nothing twice for one event id. */
  apply(change: PaymentChange, now: EpochSeconds): Promise<PaymentApplied>;
  /** The latest events, newest first: of one account, or (null) those that matched none. */
  events(accountId: string | null, limit: number): Promise<StripeEventRecord[]>;
}
