/**
 * @module Rows of money's tables on both backends, and the one decision both make alike inside
 * their transaction: what a subscription's state read from Stripe does to the account's row.
 */
import type { Topup } from '../domain/payments.js';
import type { LedgerOutcome } from './ledger-store.js';
import type { PackPayment, PaymentChange, StripeEventRecord } from './payments-store.js';
import type { AccountRow } from './rows.js';

export interface TopupRow {
  id: string;
  tokens: number | string;
  stripe_price: string;
  created_at: number | string;
  updated_at: number | string;
}

export const toTopup = (r: TopupRow): Topup => ({
  id: r.id,
  tokens: Number(r.tokens),
  stripePrice: r.stripe_price,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

export interface EventRow {
  id: string;
  type: string;
  account_id: string | null;
  received_at: number | string;
  outcome: string;
  detail: string;
}

export const toEventRecord = (r: EventRow): StripeEventRecord => ({
  id: r.id,
  type: r.type,
  accountId: r.account_id,
  receivedAt: Number(r.received_at),
  outcome: r.outcome as StripeEventRecord['outcome'],
  detail: r.detail,
});

export interface PaymentRow {
  payment_intent: string;
  session_id: string;
  account_id: string;
  topup_id: string;
  tokens: number | string;
}

/** The account's subscription columns after a state is applied, in the order both UPDATEs take them. */
export interface SubscriptionColumns {
  subscriptionId: string;
  status: string;
  priceId: string | null;
  periodStart: number | null;
  periodEnd: number | null;
  stateAt: number;
  planId: string;
  planSince: number;
  accountStatus: string;
  suspendedForPayment: boolean;
}

export type SubscriptionDecision =
  | { apply: false; note: string }
  | { apply: true; columns: SubscriptionColumns; previousStatus: string; visible: boolean; note: string };

/**
 * What the state does to `before` (the account's row, read under its lock): nothing when it was
 * read before the state the account has (an older event answered late) or when it is an ended
 * subscription the account has since replaced; else the columns, and whether anyone could see
 * the change (plan, status, subscription status or period), which is what gets audited.
 */
export function decideSubscription(
  before: AccountRow,
  sub: NonNullable<PaymentChange['subscription']>,
  now: number,
): SubscriptionDecision {
  const { state } = sub;
  const appliedAt =
    before.stripe_state_at === null || before.stripe_state_at === undefined
      ? null
      : Number(before.stripe_state_at);
  if (appliedAt !== null && appliedAt > state.readAt)
    return {
      apply: false,
      note: `subscription ${state.subscriptionId}: older than the state applied, no change`,
    };
  const own = before.stripe_subscription ?? null;
  if (!sub.live && own !== null && own !== state.subscriptionId)
    return {
      apply: false,
      note: `subscription ${state.subscriptionId} (${state.status}) is not the account's (${own}), no change`,
    };
  const suspendedForPayment = before.suspended_for_payment === 1 || before.suspended_for_payment === true;
  let accountStatus = before.status;
  let flag = suspendedForPayment;
  if (sub.status === 'suspend' && before.status === 'active') {
    accountStatus = 'suspended';
    flag = true;
  } else if (sub.status === 'resume') {
    if (before.status === 'suspended' && suspendedForPayment) accountStatus = 'active';
    flag = false;
  }
  const planId = sub.planId ?? before.plan_id;
  const columns: SubscriptionColumns = {
    subscriptionId: state.subscriptionId,
    status: state.status,
    priceId: state.priceId,
    periodStart: state.periodStart,
    periodEnd: state.periodEnd,
    stateAt: state.readAt,
    planId,
    planSince: planId === before.plan_id ? Number(before.plan_since ?? before.created_at) : now,
    accountStatus,
    suspendedForPayment: flag,
  };
  const visible =
    planId !== before.plan_id ||
    accountStatus !== before.status ||
    state.status !== (before.subscription_status ?? null) ||
    state.subscriptionId !== own ||
    state.periodEnd !== (before.period_end == null ? null : Number(before.period_end));
  return {
    apply: true,
    columns,
    previousStatus: before.status,
    visible,
    note: visible ? sub.note : `subscription ${state.subscriptionId}: unchanged`,
  };
}

/** The columns as the UPDATE both backends run takes them (after `SET`, before the id). */
export const subscriptionValues = (c: SubscriptionColumns) => [
  c.subscriptionId,
  c.status,
  c.priceId,
  c.periodStart,
  c.periodEnd,
  c.stateAt,
  c.planId,
  c.planSince,
  c.accountStatus,
];

export const toPayment = (r: PaymentRow): PackPayment => ({
  paymentIntent: r.payment_intent,
  sessionId: r.session_id,
  accountId: r.account_id,
  topupId: r.topup_id,
  tokens: Number(r.tokens),
});

/** What a grant did, in the event's detail. */
export function grantNote(outcome: LedgerOutcome, note: string): string {
  if (outcome.kind === 'applied') return note;
  if (outcome.kind === 'replayed') return `${note}: granted before, not again`;
  return `${note}: not granted (${outcome.kind})`;
}

export function takeBackNote(outcome: LedgerOutcome, note: string, amount: number): string {
  if (outcome.kind === 'applied') return `${note}: ${amount} tokens taken back`;
  if (outcome.kind === 'replayed') return `${note}: taken back before, not again`;
  return `${note}: nothing to take back (the balance is 0)`;
}
