/** @module What Stripe Billing does in the fake: the subscription, invoice, PaymentIntent and Charge objects it makes, and the doings a test asks for (a paid Checkout, a status change, a renewal, a refund), each answered with the events Stripe sends. */
import { randomBytes } from 'node:crypto';
import type Stripe from 'stripe';
import type { FakeAccount, RequestRef } from './fake-stripe-account.js';
import {
  addInterval,
  type Charge,
  type Customer,
  eventObject,
  list,
  type Metadata,
  newId,
  now,
  nullsOf,
  type PaymentIntent,
  type Price,
  type Session,
  type Shape,
  type StripeEvent,
  type Subscription,
  type SubscriptionItem,
} from './fake-stripe-objects.js';

export function subscriptionObject(p: {
  customer: string;
  lines: { price: Price; quantity: number }[];
  metadata: Metadata;
  start: number;
}): Subscription {
  const id = newId('sub');
  const sub = {
    id,
    object: 'subscription',
    billing_cycle_anchor: p.start,
    cancel_at_period_end: false,
    cancellation_details: { comment: null, feedback: null, reason: null },
    collection_method: 'charge_automatically',
    created: p.start,
    currency: p.lines[0]!.price.currency,
    customer: p.customer,
    discounts: [],
    livemode: false,
    metadata: p.metadata,
    start_date: p.start,
    status: 'active',
    ...nullsOf<Stripe.Subscription>()('application', 'cancel_at', 'canceled_at', 'default_payment_method'),
    ...nullsOf<Stripe.Subscription>()('description', 'ended_at', 'latest_invoice', 'pause_collection'),
    ...nullsOf<Stripe.Subscription>()('schedule', 'test_clock', 'trial_end', 'trial_start'),
  } satisfies Shape<Stripe.Subscription>;
  const items = p.lines.map(({ price, quantity }) => subscriptionItemObject(id, price, quantity, p.start));
  return { ...sub, items: list(items, `/v1/subscription_items?subscription=${id}`) };
}

export function subscriptionItemObject(
  subscription: string,
  price: Price,
  quantity: number,
  start: number,
): SubscriptionItem {
  const item = {
    id: newId('si'),
    object: 'subscription_item',
    billing_thresholds: null,
    created: start,
    current_period_start: start,
    current_period_end: addInterval(start, price.recurring!.interval, price.recurring!.interval_count),
    discounts: [],
    metadata: {},
    quantity,
    subscription,
    tax_rates: [],
  } satisfies Shape<Stripe.SubscriptionItem>;
  return { ...item, price };
}

/** One line per subscription item, billed for its current period (in advance, as Stripe bills licensed prices). */
function invoiceLines(invoice: string, sub: Subscription) {
  return sub.items.data.map((item) => {
    const amount = item.price.unit_amount * item.quantity;
    const details = { invoice_item: null, proration: false, proration_details: { credited_items: null } };
    const line = {
      id: newId('il'),
      object: 'line_item',
      amount,
      currency: item.price.currency,
      description: `${item.quantity} × ${item.price.nickname ?? item.price.id}`,
      discount_amounts: [],
      discountable: true,
      discounts: [],
      invoice,
      livemode: false,
      metadata: {},
      parent: {
        type: 'subscription_item_details',
        invoice_item_details: null,
        subscription_item_details: { ...details, subscription: sub.id, subscription_item: item.id },
      },
      period: { start: item.current_period_start, end: item.current_period_end },
      pricing: {
        type: 'price_details',
        price_details: { price: item.price.id, product: item.price.product },
      },
      quantity: item.quantity,
      subtotal: amount,
      taxes: [],
    } satisfies Shape<Stripe.InvoiceLineItem>;
    return line;
  });
}

/** A paid invoice for the subscription's items (its parent names the subscription, as API versions since 2025-03-31 do). */
export function invoiceObject(p: {
  sub: Subscription;
  customer: Customer;
  reason: 'subscription_create' | 'subscription_cycle';
  periodStart: number;
  periodEnd: number;
}): { id: string } {
  const id = newId('in');
  const created = now();
  const lines = invoiceLines(id, p.sub);
  const total = lines.reduce((sum, line) => sum + line.amount, 0);
  const invoice = {
    id,
    object: 'invoice',
    amount_due: total,
    amount_overpaid: 0,
    amount_paid: total,
    amount_remaining: 0,
    attempt_count: 1,
    attempted: true,
    billing_reason: p.reason,
    collection_method: 'charge_automatically',
    created,
    currency: p.sub.currency,
    customer: p.customer.id,
    customer_email: p.customer.email,
    customer_name: p.customer.name,
    description: null,
    lines: list(lines, `/v1/invoices/${id}/lines`),
    livemode: false,
    metadata: {},
    parent: {
      type: 'subscription_details',
      quote_details: null,
      subscription_details: { metadata: structuredClone(p.sub.metadata), subscription: p.sub.id },
    },
    period_end: p.periodEnd,
    period_start: p.periodStart,
    status: 'paid',
    status_transitions: {
      finalized_at: created,
      marked_uncollectible_at: null,
      paid_at: created,
      voided_at: null,
    },
    subtotal: total,
    total,
  } satisfies Shape<Stripe.Invoice>;
  return invoice;
}

export function paymentIntentObject(p: {
  amount: number;
  currency: string;
  customer: string | null;
  metadata: Metadata;
  status: 'processing' | 'succeeded';
}): PaymentIntent {
  const id = newId('pi');
  const intent = {
    id,
    object: 'payment_intent',
    amount: p.amount,
    amount_capturable: 0,
    amount_received: p.status === 'succeeded' ? p.amount : 0,
    capture_method: 'automatic_async',
    client_secret: `${id}_secret_${randomBytes(8).toString('hex')}`,
    confirmation_method: 'automatic',
    created: now(),
    currency: p.currency,
    customer: p.customer,
    livemode: false,
    metadata: p.metadata,
    payment_method: newId('pm'),
    payment_method_types: ['card'],
    status: p.status,
    ...nullsOf<Stripe.PaymentIntent>()('description', 'latest_charge'),
  } satisfies Shape<Stripe.PaymentIntent>;
  return intent;
}

export function chargeObject(intent: PaymentIntent): Charge {
  const charge = {
    id: newId('ch'),
    object: 'charge',
    amount: intent.amount,
    amount_captured: intent.amount,
    amount_refunded: 0,
    captured: true,
    created: now(),
    currency: intent.currency,
    customer: intent.customer,
    disputed: false,
    livemode: false,
    metadata: {},
    paid: true,
    payment_intent: intent.id,
    refunded: false,
    status: 'succeeded',
    ...nullsOf<Stripe.Charge>()(
      'balance_transaction',
      'description',
      'failure_code',
      'failure_message',
      'receipt_url',
    ),
  } satisfies Shape<Stripe.Charge>;
  return charge;
}

export function cancelSubscription(sub: Subscription, request?: RequestRef): StripeEvent {
  const at = now();
  sub.status = 'canceled';
  sub.canceled_at = at;
  sub.ended_at = at;
  sub.cancellation_details.reason = 'cancellation_requested';
  return eventObject('customer.subscription.deleted', sub, at, request);
}

export function completeCheckout(
  account: FakeAccount,
  sessionId: string,
  opts: { async?: boolean } = {},
): StripeEvent[] {
  const session = account.get<Session>('checkout.session', sessionId);
  if (session.status !== 'open')
    throw new Error(`Checkout Session ${sessionId} is ${session.status}, not open.`);
  if (opts.async && session.mode !== 'payment') throw new Error('An async payment is for payment mode only.');
  const customer = session.customer
    ? account.customers.get(session.customer)!
    : account.createCustomer({ email: session.customer_email ?? undefined });
  const details = {
    address: null,
    email: customer.email ?? session.customer_email,
    name: customer.name,
    phone: null,
    tax_exempt: 'none',
    tax_ids: [],
  } satisfies Shape<Stripe.Checkout.Session.CustomerDetails>;
  Object.assign(session, { customer: customer.id, customer_details: details, status: 'complete', url: null });
  const data = account.sessionData.get(sessionId)!;
  return session.mode === 'subscription'
    ? paySubscription(account, session, customer, data.subscriptionMetadata)
    : payOnce(account, session, data.paymentMetadata, opts.async === true);
}

function paySubscription(
  account: FakeAccount,
  session: Session,
  customer: Customer,
  metadata: Metadata,
): StripeEvent[] {
  const start = now();
  const lines = account.sessionData
    .get(session.id)!
    .lines.map((l) => ({ price: structuredClone(account.prices.get(l.price)!), quantity: l.quantity }));
  const sub = subscriptionObject({ customer: customer.id, lines, metadata, start });
  account.subscriptions.set(sub.id, sub);
  const invoice = invoiceObject({
    sub,
    customer,
    reason: 'subscription_create',
    periodStart: start,
    periodEnd: start,
  });
  account.invoices.set(invoice.id, invoice);
  sub.latest_invoice = invoice.id;
  Object.assign(session, { subscription: sub.id, invoice: invoice.id, payment_status: 'paid' });
  return [
    eventObject('checkout.session.completed', session),
    eventObject('customer.subscription.created', sub),
    eventObject('invoice.paid', invoice),
  ];
}

function payOnce(account: FakeAccount, session: Session, metadata: Metadata, async: boolean): StripeEvent[] {
  const intent = paymentIntentObject({
    amount: session.amount_total,
    currency: session.currency,
    customer: session.customer,
    metadata,
    status: 'processing',
  });
  account.paymentIntents.set(intent.id, intent);
  session.payment_intent = intent.id;
  // An async method (a bank debit) completes the session before the money arrives.
  const events = async ? [eventObject('checkout.session.completed', session)] : [];
  const charge = chargeObject(intent);
  account.charges.set(charge.id, charge);
  Object.assign(intent, { status: 'succeeded', amount_received: intent.amount, latest_charge: charge.id });
  session.payment_status = 'paid';
  const type = async ? 'checkout.session.async_payment_succeeded' : 'checkout.session.completed';
  return [...events, eventObject(type, session)];
}

export function updateSubscription(
  account: FakeAccount,
  id: string,
  change: { status?: string; price?: string },
): StripeEvent {
  const sub = account.get<Subscription>('subscription', id);
  if (change.status === 'canceled') return cancelSubscription(sub);
  const previous: Record<string, unknown> = {};
  if (change.price !== undefined) {
    const price = account.get<Price>('price', change.price);
    previous.items = structuredClone(sub.items);
    sub.items.data[0]!.price = structuredClone(price);
  }
  if (change.status !== undefined && change.status !== sub.status) {
    previous.status = sub.status;
    sub.status = change.status;
  }
  return eventObject('customer.subscription.updated', sub, now(), undefined, previous);
}

export function renewSubscription(account: FakeAccount, id: string): StripeEvent[] {
  const sub = account.get<Subscription>('subscription', id);
  if (sub.status === 'canceled') throw new Error(`Subscription ${id} is canceled: it does not renew.`);
  const previous: Record<string, unknown> = {
    items: structuredClone(sub.items),
    latest_invoice: sub.latest_invoice,
  };
  const first = sub.items.data[0]!;
  const [periodStart, periodEnd] = [first.current_period_start, first.current_period_end];
  for (const item of sub.items.data) {
    item.current_period_start = item.current_period_end;
    const { interval, interval_count } = item.price.recurring!;
    item.current_period_end = addInterval(item.current_period_start, interval, interval_count);
  }
  // The renewal's invoice is paid, so a subscription that was behind is active again.
  if (sub.status !== 'active') previous.status = sub.status;
  sub.status = 'active';
  const customer = account.customers.get(sub.customer)!;
  const invoice = invoiceObject({ sub, customer, reason: 'subscription_cycle', periodStart, periodEnd });
  account.invoices.set(invoice.id, invoice);
  sub.latest_invoice = invoice.id;
  return [
    eventObject('customer.subscription.updated', sub, now(), undefined, previous),
    eventObject('invoice.paid', invoice),
  ];
}

export function refund(account: FakeAccount, paymentIntentId: string, amount?: number): StripeEvent {
  const intent = account.get<PaymentIntent>('payment_intent', paymentIntentId);
  const charge = intent.latest_charge ? account.charges.get(intent.latest_charge) : undefined;
  if (!charge) throw new Error(`PaymentIntent ${paymentIntentId} has no charge to refund.`);
  const remaining = charge.amount - charge.amount_refunded;
  const value = amount ?? remaining;
  if (!Number.isInteger(value) || value <= 0 || value > remaining)
    throw new Error(`Cannot refund ${value} of charge ${charge.id}: ${remaining} is left to refund.`);
  const previous = { amount_refunded: charge.amount_refunded, refunded: charge.refunded };
  charge.amount_refunded += value;
  charge.refunded = charge.amount_refunded === charge.amount;
  return eventObject('charge.refunded', charge, now(), undefined, previous);
}
