/**
 * @module Money's rules, known to no payment provider's library: token packs, a subscription's
 * state as toolgate keeps it, and what a subscription's status means for the account's plan.
 * Prices themselves live in Stripe; toolgate keeps only which price is which plan or pack.
 */
import type { EpochSeconds } from './clock.js';
import { fail, ok, type Result } from './errors.js';
import { MAX_TOKENS } from './ledger.js';

/** A token pack: a one-time Stripe price that grants `tokens` when paid. */
export interface Topup {
  id: string;
  tokens: number;
  stripePrice: string;
  createdAt: EpochSeconds;
  updatedAt: EpochSeconds;
}

/** Stripe's subscription statuses (what `get_billing.subscription_status` shows). */
export const SUBSCRIPTION_STATUSES = [
  'active',
  'trialing',
  'past_due',
  'unpaid',
  'canceled',
  'incomplete',
  'incomplete_expired',
  'paused',
] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

export const isSubscriptionStatus = (value: string): value is SubscriptionStatus =>
  (SUBSCRIPTION_STATUSES as readonly string[]).includes(value);

/** An account's link to Stripe, as stored on the account. */
export interface AccountBilling {
  customerId: string;
  subscriptionId: string | null;
  status: SubscriptionStatus | null;
  priceId: string | null;
  periodStart: EpochSeconds | null;
  periodEnd: EpochSeconds | null;
  /** When the applied state was read from Stripe (ms): an older read never replaces a newer one. */
  stateAt: number | null;
  /** Whether toolgate suspended the account for an unpaid subscription (so only it lifts that). */
  suspendedForPayment: boolean;
}

/** A subscription as read back from Stripe, to apply to its account. */
export interface SubscriptionState {
  subscriptionId: string;
  status: SubscriptionStatus;
  priceId: string | null;
  periodStart: EpochSeconds | null;
  periodEnd: EpochSeconds | null;
  /** When it was read (ms). */
  readAt: number;
}

/** TOOLGATE_STRIPE_UNPAID: what an unpaid subscription does to its account. */
export type UnpaidPolicy = 'fallback' | 'suspend';

/** What a subscription's state does to its account's plan and status. */
export interface SubscriptionEffect {
  /** The plan the account is on after it; undefined: leave the plan as it is. */
  planId: string | undefined;
  /** suspend or lift toolgate's own suspension; undefined: leave the status. */
  status: 'suspend' | 'resume' | undefined;
}

/**
 * The plan a subscription puts its account on. Paying states (active, trialing, past_due: Stripe
 * is still retrying, so the customer keeps being served) follow the price's plan; ended states
 * (canceled, incomplete_expired, paused) go to the fallback plan; unpaid falls back, or suspends
 * under `suspend`; incomplete (the first payment not made yet) changes nothing.
 */
export function subscriptionEffect(
  state: SubscriptionState,
  planOfPrice: string | undefined,
  fallbackPlan: string,
  unpaid: UnpaidPolicy,
): SubscriptionEffect {
  switch (state.status) {
    case 'active':
    case 'trialing':
    case 'past_due':
      return { planId: planOfPrice, status: 'resume' };
    case 'unpaid':
      return unpaid === 'suspend'
        ? { planId: undefined, status: 'suspend' }
        : { planId: fallbackPlan, status: 'resume' };
    case 'canceled':
    case 'incomplete_expired':
    case 'paused':
      return { planId: fallbackPlan, status: 'resume' };
    case 'incomplete':
      return { planId: undefined, status: undefined };
  }
}

const PACK_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** Stripe's price ids: `price_…`, or a lookup-free id an operator created with the API. */
const PRICE_ID = /^[A-Za-z0-9_]{3,255}$/;

export function validatePackId(id: string): Result<string> {
  return PACK_ID.test(id)
    ? ok(id)
    : fail(
        'invalid_arguments',
        `Pack id "${id.slice(0, 80)}" must be 1-64 characters of a-z, 0-9, "_" or "-".`,
      );
}

export function validatePriceId(value: unknown, member = 'stripe_price'): Result<string> {
  return typeof value === 'string' && PRICE_ID.test(value)
    ? ok(value)
    : fail('invalid_arguments', `${member} must be a Stripe price id, such as price_1PqRsT…`);
}

export function validatePackTokens(value: unknown): Result<number> {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1 && value <= MAX_TOKENS
    ? ok(value)
    : fail('invalid_arguments', `tokens must be a whole number from 1 to ${MAX_TOKENS}.`);
}

/** A plan's tokens per paid period: null for none. */
export function validatePeriodTokens(value: unknown): Result<number | null> {
  if (value === null || value === undefined) return ok(null);
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= MAX_TOKENS
    ? ok(value)
    : fail('invalid_arguments', `period_tokens must be a whole number from 0 to ${MAX_TOKENS}, or null.`);
}

/** A price as customers see it: `€19.00 / month`, `$5.00`. */
export function formatPrice(p: {
  unitAmount: number | null;
  currency: string;
  interval: string | null;
  intervalCount: number;
}): string {
  let amount = 'custom';
  if (p.unitAmount !== null) {
    const format = new Intl.NumberFormat('en', { style: 'currency', currency: p.currency.toUpperCase() });
    // Stripe counts in the currency's smallest unit: cents, or yen for a zero-decimal currency.
    amount = format.format(p.unitAmount / 10 ** (format.resolvedOptions().maximumFractionDigits ?? 2));
  }
  if (!p.interval) return amount;
  return p.intervalCount > 1 ? `${amount} / ${p.intervalCount} ${p.interval}s` : `${amount} / ${p.interval}`;
}
