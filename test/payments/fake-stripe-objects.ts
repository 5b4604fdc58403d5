/** @module The fake Stripe's objects, built in the shapes API version 2026-10-28.endive returns: each literal is checked against the official library's types, so a misspelt or misplaced member fails tsc. */
import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';

/** The library's type with every member optional at every depth: a literal can leave members out, not invent them. */
export type Shape<T> = T extends readonly (infer U)[]
  ? Shape<U>[]
  : T extends object
    ? { [K in keyof T]?: Shape<T[K]> }
    : T;

/** Members Stripe sends as null while they do not apply, named against the library's type. */
export const nullsOf =
  <T>() =>
  <K extends keyof T & string>(...keys: K[]): { [P in K]: null } =>
    Object.fromEntries(keys.map((k) => [k, null])) as { [P in K]: null };

export type Metadata = Record<string, string>;

export interface List<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  url: string;
}

export interface Price {
  id: string;
  object: 'price';
  active: boolean;
  billing_scheme: 'per_unit';
  created: number;
  currency: string;
  livemode: false;
  metadata: Metadata;
  nickname: string | null;
  product: string;
  recurring: { interval: 'month' | 'year'; interval_count: number; usage_type: 'licensed' } | null;
  tax_behavior: 'unspecified';
  type: 'recurring' | 'one_time';
  unit_amount: number;
  /** A string on the wire; the library turns it into its Decimal. */
  unit_amount_decimal: string;
}

export interface StripeEvent {
  id: string;
  object: 'event';
  api_version: string;
  created: number;
  type: string;
  // Tests read into payloads of many shapes; `any` spares each of them a cast.
  data: { object: any; previous_attributes?: Record<string, unknown> };
  livemode: false;
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
}

// The members of Stripe's objects that the fake reads or changes after building them.

export interface Customer {
  id: string;
  email: string | null;
  name: string | null;
}

export interface Session {
  id: string;
  mode: 'subscription' | 'payment';
  customer: string | null;
  customer_email: string | null;
  customer_details: { email: string | null; name: string | null } | null;
  status: string;
  payment_status: string;
  url: string | null;
  success_url: string | null;
  cancel_url: string | null;
  subscription: string | null;
  payment_intent: string | null;
  invoice: string | null;
  amount_total: number;
  currency: string;
}

export interface SubscriptionItem {
  id: string;
  price: Price;
  quantity: number;
  current_period_start: number;
  current_period_end: number;
}

export interface Subscription {
  id: string;
  customer: string;
  status: string;
  currency: string;
  metadata: Metadata;
  cancel_at_period_end: boolean;
  canceled_at: number | null;
  ended_at: number | null;
  cancellation_details: { comment: null; feedback: null; reason: string | null };
  items: List<SubscriptionItem>;
  latest_invoice: string | null;
}

export interface PaymentIntent {
  id: string;
  amount: number;
  amount_received: number;
  currency: string;
  customer: string | null;
  status: string;
  latest_charge: string | null;
}

export interface Charge {
  id: string;
  amount: number;
  amount_refunded: number;
  refunded: boolean;
}

export const now = (): number => Math.floor(Date.now() / 1000);
export const newId = (prefix: string): string => `${prefix}_${randomBytes(12).toString('hex')}`;
export const list = <T>(data: T[], url: string, hasMore = false): List<T> => ({
  object: 'list',
  data,
  has_more: hasMore,
  url,
});

/** Stripe's calendar arithmetic: Jan 31 + 1 month is Feb 28 (or 29), not Mar 3. */
export function addInterval(at: number, interval: string, count: number): number {
  const d = new Date(at * 1000);
  const months = count * (interval === 'year' ? 12 : 1);
  const day = d.getUTCDate();
  d.setUTCDate(1);
  d.setUTCMonth(d.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
  d.setUTCDate(Math.min(day, lastDay));
  return Math.floor(d.getTime() / 1000);
}

export interface PriceInput {
  id?: string;
  type: 'recurring' | 'one_time';
  unitAmount: number;
  currency?: string;
  interval?: 'month' | 'year';
  nickname?: string;
}

export function priceObject(p: PriceInput): Price {
  const recurring = { interval: p.interval ?? 'month', interval_count: 1, usage_type: 'licensed' as const };
  const price = {
    id: p.id ?? newId('price'),
    object: 'price' as const,
    active: true,
    billing_scheme: 'per_unit' as const,
    created: now(),
    currency: p.currency ?? 'usd',
    livemode: false as const,
    metadata: {},
    nickname: p.nickname ?? null,
    product: newId('prod'),
    recurring: p.type === 'recurring' ? { ...recurring, meter: null, trial_period_days: null } : null,
    tax_behavior: 'unspecified' as const,
    type: p.type,
    unit_amount: p.unitAmount,
    ...nullsOf<Stripe.Price>()('custom_unit_amount', 'lookup_key', 'tiers_mode', 'transform_quantity'),
  } satisfies Shape<Stripe.Price>;
  return { ...price, unit_amount_decimal: String(p.unitAmount) };
}

export function customerObject(p: {
  name: string | null;
  email: string | null;
  description: string | null;
  metadata: Metadata;
}): Customer {
  const customer = {
    id: newId('cus'),
    object: 'customer',
    balance: 0,
    created: now(),
    delinquent: false,
    description: p.description,
    email: p.email,
    invoice_prefix: randomBytes(4).toString('hex').toUpperCase(),
    invoice_settings: {
      ...nullsOf<Stripe.Customer.InvoiceSettings>()(
        'custom_fields',
        'default_payment_method',
        'footer',
        'rendering_options',
      ),
    },
    livemode: false,
    metadata: p.metadata,
    name: p.name,
    next_invoice_sequence: 1,
    preferred_locales: [],
    tax_exempt: 'none',
    ...nullsOf<Stripe.Customer>()(
      'address',
      'currency',
      'default_source',
      'discount',
      'phone',
      'shipping',
      'test_clock',
    ),
  } satisfies Shape<Stripe.Customer>;
  return customer;
}

export function sessionObject(p: {
  baseUrl: string;
  mode: 'subscription' | 'payment';
  customer: string | null;
  customerEmail: string | null;
  clientReferenceId: string | null;
  successUrl: string | null;
  cancelUrl: string | null;
  metadata: Metadata;
  amount: number;
  currency: string;
}): Session {
  const id = newId('cs_test');
  const created = now();
  const session = {
    id,
    object: 'checkout.session',
    amount_subtotal: p.amount,
    amount_total: p.amount,
    cancel_url: p.cancelUrl,
    client_reference_id: p.clientReferenceId,
    created,
    currency: p.currency,
    customer: p.customer,
    customer_email: p.customerEmail,
    expires_at: created + 24 * 3600,
    livemode: false,
    metadata: p.metadata,
    mode: p.mode,
    payment_method_types: ['card'],
    payment_status: 'unpaid',
    status: 'open',
    success_url: p.successUrl,
    ui_mode: 'hosted',
    url: `${p.baseUrl}/pay/${id}`,
    ...nullsOf<Stripe.Checkout.Session>()('customer_details', 'invoice', 'payment_intent', 'subscription'),
  } satisfies Shape<Stripe.Checkout.Session>;
  return session;
}

/** A Checkout line as the session keeps it: the price by id, shown as it is when the session is read. */
export interface Line {
  id: string;
  price: string;
  quantity: number;
}

export function lineItemsList(sessionId: string, lines: Line[], prices: Map<string, Price>): List<unknown> {
  const data = lines.map((line) => {
    const price = prices.get(line.price)!;
    const amount = price.unit_amount * line.quantity;
    const item = {
      id: line.id,
      object: 'item',
      adjustable_quantity: null,
      amount_discount: 0,
      amount_subtotal: amount,
      amount_tax: 0,
      amount_total: amount,
      currency: price.currency,
      description: price.nickname,
      metadata: {},
      quantity: line.quantity,
    } satisfies Shape<Stripe.LineItem>;
    return { ...item, price };
  });
  return list(data, `/v1/checkout/sessions/${sessionId}/line_items`);
}

export function portalObject(
  baseUrl: string,
  customer: string,
  returnUrl: string | null,
): { id: string; return_url: string | null } {
  const id = newId('bps');
  const portal = {
    id,
    object: 'billing_portal.session',
    configuration: 'bpc_fake',
    created: now(),
    customer,
    livemode: false,
    return_url: returnUrl,
    url: `${baseUrl}/portal/${id}`,
    ...nullsOf<Stripe.BillingPortal.Session>()('flow', 'locale', 'on_behalf_of'),
  } satisfies Shape<Stripe.BillingPortal.Session>;
  return portal;
}

export function eventObject(
  type: string,
  object: unknown,
  created = now(),
  request: StripeEvent['request'] = { id: null, idempotency_key: null },
  previous?: Record<string, unknown>,
): StripeEvent {
  const event = {
    id: newId('evt'),
    object: 'event' as const,
    api_version: Stripe.API_VERSION,
    created,
    livemode: false as const,
    pending_webhooks: 1,
    request,
  } satisfies Shape<Stripe.EventBase>;
  // A snapshot: later changes to the object must not reach an event already taken.
  const data = { object: structuredClone(object), ...(previous ? { previous_attributes: previous } : {}) };
  return { ...event, type, data };
}
