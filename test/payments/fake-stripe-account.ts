/** @module The fake Stripe's account: the objects it holds, the API's requests read into parameters, and what the API does to the objects (Stripe's own doings are in fake-stripe-billing.ts). */

import { cancelSubscription, subscriptionItemObject } from './fake-stripe-billing.js';
import {
  type Charge,
  type Customer,
  customerObject,
  eventObject,
  type Line,
  type List,
  lineItemsList,
  list,
  type Metadata,
  newId,
  now,
  type PaymentIntent,
  type Price,
  type PriceInput,
  portalObject,
  priceObject,
  type Session,
  type StripeEvent,
  type Subscription,
  sessionObject,
} from './fake-stripe-objects.js';

export type Params = Record<string, unknown>;
/** The API request an event came from, as Stripe names it in the event. */
export type RequestRef = StripeEvent['request'];

/** A refusal in Stripe's error shape; the server answers it with `status`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly error: { type: string; message: string; code?: string; param?: string },
  ) {
    super(error.message);
  }
}

export const refused = (message: string, param?: string): ApiError =>
  new ApiError(400, { type: 'invalid_request_error', message, ...(param ? { param } : {}) });

/** 404 for the object a URL names; 400 (with the parameter) for one a request refers to. */
const missing = (noun: string, id: string, param = 'id', status = 404): ApiError =>
  new ApiError(status, {
    type: 'invalid_request_error',
    code: 'resource_missing',
    param,
    message: `No such ${noun}: '${id}'`,
  });

// Parameter names must not reach Object.prototype through the parsed objects.
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** `a[b][0][c]=v&x[]=y` into nested objects and arrays, as Stripe reads the library's bodies and query strings; values stay strings. */
export function parseForm(text: string): Params {
  const root: Params = {};
  const decode = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
  for (const pair of text.split('&')) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const key = decode(eq < 0 ? pair : pair.slice(0, eq));
    const match = /^([^[]+)((?:\[[^\]]*\])*)$/.exec(key);
    const path = match ? [match[1]!, ...[...match[2]!.matchAll(/\[([^\]]*)\]/g)].map((m) => m[1]!)] : [key];
    if (!path.some((segment) => FORBIDDEN_KEYS.has(segment)))
      assignPath(root, path, eq < 0 ? '' : decode(pair.slice(eq + 1)));
  }
  return root;
}

function assignPath(root: Params, path: string[], value: string): void {
  let node: Params | unknown[] = root;
  path.forEach((segment, i) => {
    const key = Array.isArray(node) ? (segment === '' ? node.length : Number(segment)) : segment;
    const slots = node as Record<string | number, unknown>;
    if (i === path.length - 1) {
      slots[key] = value;
      return;
    }
    const next = path[i + 1]!;
    const existing = slots[key];
    const child =
      existing !== null && typeof existing === 'object'
        ? existing
        : next === '' || /^\d+$/.test(next)
          ? []
          : {};
    slots[key] = child;
    node = child as Params | unknown[];
  });
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const obj = (v: unknown): Params =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Params) : {};
/** Stripe drops a metadata key sent empty. */
const meta = (v: unknown): Metadata =>
  Object.fromEntries(Object.entries(obj(v)).filter((e): e is [string, string] => str(e[1]) !== null));

const CANCELED_REFUSAL = 'A canceled subscription can only update its cancellation_details and metadata.';

export interface SessionData {
  lines: Line[];
  subscriptionMetadata: Metadata;
  paymentMetadata: Metadata;
}

export class FakeAccount {
  readonly prices = new Map<string, Price>();
  readonly customers = new Map<string, Customer>();
  readonly sessions = new Map<string, Session>();
  readonly subscriptions = new Map<string, Subscription>();
  readonly invoices = new Map<string, { id: string }>();
  readonly paymentIntents = new Map<string, PaymentIntent>();
  readonly charges = new Map<string, Charge>();
  readonly portals = new Map<string, { id: string; return_url: string | null }>();
  queued: StripeEvent[] = [];
  readonly sessionData = new Map<string, SessionData>();
  /** By the noun Stripe's "No such …" messages use. */
  private readonly tables: Record<string, Map<string, object>> = {
    price: this.prices,
    customer: this.customers,
    'checkout.session': this.sessions,
    subscription: this.subscriptions,
    invoice: this.invoices,
    payment_intent: this.paymentIntents,
    charge: this.charges,
  };

  constructor(private readonly baseUrl: string) {}

  get<T extends object>(noun: string, id: string): T {
    const found = this.tables[noun]?.get(id);
    if (!found) throw missing(noun, id);
    return found as T;
  }

  /** A copy of the object with the `expand` paths Stripe would expand (one level: ids into their objects). */
  view(noun: string, id: string, expand: string[]): Params {
    const copy = structuredClone(this.get<Params>(noun, id));
    for (const path of expand) {
      if (noun === 'checkout.session' && path === 'line_items') {
        copy.line_items = this.lineItems(id);
        continue;
      }
      const value = copy[path];
      const target =
        typeof value === 'string' &&
        Object.values(this.tables)
          .find((t) => t.has(value))
          ?.get(value);
      if (value !== null && !target) throw refused(`This property cannot be expanded (${path}).`, 'expand');
      if (target) copy[path] = structuredClone(target);
    }
    return copy;
  }

  lineItems(sessionId: string): List<unknown> {
    this.get('checkout.session', sessionId);
    return lineItemsList(sessionId, this.sessionData.get(sessionId)!.lines, this.prices);
  }

  addPrice(p: PriceInput): Price {
    const price = priceObject(p);
    this.prices.set(price.id, price);
    return structuredClone(price);
  }

  createCustomer(p: Params): Customer {
    const customer = customerObject({
      name: str(p.name),
      email: str(p.email),
      description: str(p.description),
      metadata: meta(p.metadata),
    });
    this.customers.set(customer.id, customer);
    return customer;
  }

  createSession(p: Params): Session {
    const mode = p.mode;
    if (mode !== 'subscription' && mode !== 'payment')
      throw refused(`The fake takes mode subscription or payment, not ${String(mode)}.`, 'mode');
    const customer = str(p.customer);
    if (customer && !this.customers.has(customer)) throw missing('customer', customer, 'customer', 400);
    const lines = this.sessionLines(p.line_items, mode);
    const priced = lines.map((line) => ({ price: this.prices.get(line.price)!, quantity: line.quantity }));
    const session = sessionObject({
      baseUrl: this.baseUrl,
      mode,
      customer,
      customerEmail: str(p.customer_email),
      clientReferenceId: str(p.client_reference_id),
      successUrl: str(p.success_url),
      cancelUrl: str(p.cancel_url),
      metadata: meta(p.metadata),
      amount: priced.reduce((sum, l) => sum + l.price.unit_amount * l.quantity, 0),
      currency: priced[0]!.price.currency,
    });
    this.sessions.set(session.id, session);
    this.sessionData.set(session.id, {
      lines,
      subscriptionMetadata: meta(obj(p.subscription_data).metadata),
      paymentMetadata: meta(obj(p.payment_intent_data).metadata),
    });
    return session;
  }

  private sessionLines(raw: unknown, mode: 'subscription' | 'payment'): Line[] {
    if (!Array.isArray(raw) || raw.length === 0)
      throw refused('Missing required param: line_items.', 'line_items');
    return raw.map((entry, i) => {
      const e = obj(entry);
      const param = `line_items[${i}][price]`;
      const priceId = str(e.price);
      if (!priceId) throw refused('The fake takes line items by price id only.', param);
      const price = this.prices.get(priceId);
      if (!price) throw missing('price', priceId, param, 400);
      // Stripe would put a one-time price beside a recurring one on the first invoice; the fake refuses it.
      if (mode === 'subscription' && price.type !== 'recurring')
        throw refused(
          'You must provide at least one recurring price in `subscription` mode when using prices.',
          param,
        );
      if (mode === 'payment' && price.type === 'recurring')
        throw refused(
          'You specified `payment` mode but passed a recurring price. Either switch to `subscription` mode or use only one-time prices.',
          param,
        );
      const quantity = e.quantity === undefined ? 1 : Number(e.quantity);
      if (!Number.isInteger(quantity) || quantity < 1)
        throw refused('Invalid positive integer', `line_items[${i}][quantity]`);
      return { id: newId('li'), price: priceId, quantity };
    });
  }

  createPortal(p: Params): { id: string } {
    const customer = str(p.customer);
    if (!customer) throw refused('Missing required param: customer.', 'customer');
    if (!this.customers.has(customer)) throw missing('customer', customer, 'customer', 400);
    const portal = portalObject(this.baseUrl, customer, str(p.return_url));
    this.portals.set(portal.id, portal);
    return portal;
  }

  /** Newest first; without `status`, canceled ones are left out (as Stripe does); `status=all` keeps them. */
  listSubscriptions(p: Params): List<Subscription> {
    const status = str(p.status);
    const all = [...this.subscriptions.values()]
      .reverse()
      .filter((s) => !str(p.customer) || s.customer === p.customer)
      .filter((s) => !str(p.price) || s.items.data.some((item) => item.price.id === p.price))
      .filter((s) => (status === null ? s.status !== 'canceled' : status === 'all' || s.status === status));
    const after = str(p.starting_after);
    const from = after ? all.findIndex((s) => s.id === after) + 1 : 0;
    const limit = Math.min(Math.max(Number(p.limit ?? 10) || 10, 1), 100);
    const page = all.slice(from, from + limit);
    return list(structuredClone(page), '/v1/subscriptions', from + limit < all.length);
  }

  /** POST /v1/subscriptions/:id: items, cancel_at_period_end and metadata; an actual change queues the event. */
  updateSubscriptionByApi(id: string, p: Params, request: RequestRef): Subscription {
    const sub = this.get<Subscription>('subscription', id);
    const keys = Object.keys(p).filter((k) => !['expand', 'metadata', 'cancellation_details'].includes(k));
    if (sub.status === 'canceled' && keys.length > 0) throw refused(CANCELED_REFUSAL);
    const previous: Params = {};
    if (p.items !== undefined) this.changeItems(sub, p.items, previous);
    if (p.cancel_at_period_end !== undefined) {
      const value = p.cancel_at_period_end === 'true';
      if (value !== sub.cancel_at_period_end) previous.cancel_at_period_end = sub.cancel_at_period_end;
      sub.cancel_at_period_end = value;
    }
    if (p.metadata !== undefined) {
      const next = { ...sub.metadata, ...meta(p.metadata) };
      for (const [k, v] of Object.entries(obj(p.metadata))) if (v === '') delete next[k];
      if (JSON.stringify(next) !== JSON.stringify(sub.metadata)) previous.metadata = sub.metadata;
      sub.metadata = next;
    }
    if (Object.keys(previous).length > 0)
      this.queued.push(eventObject('customer.subscription.updated', sub, now(), request, previous));
    return sub;
  }

  /** Checks every entry before changing any, so a refused request leaves the subscription as it was. */
  private changeItems(sub: Subscription, raw: unknown, previous: Params): void {
    if (!Array.isArray(raw)) throw refused('Invalid array', 'items');
    const changes = raw.map((entry, i) => {
      const e = obj(entry);
      const itemId = str(e.id);
      const priceId = str(e.price);
      const item = itemId ? sub.items.data.find((it) => it.id === itemId) : undefined;
      if (itemId && !item) throw missing('subscription item', itemId, `items[${i}][id]`, 400);
      const price = priceId ? this.prices.get(priceId) : undefined;
      if (priceId && !price) throw missing('price', priceId, `items[${i}][price]`, 400);
      if (price && price.type !== 'recurring')
        throw refused(
          'The price specified is set to `type=one_time` but this field only accepts prices with `type=recurring`.',
          `items[${i}][price]`,
        );
      if (!item && !price) throw refused('An item needs an id or a price.', `items[${i}]`);
      return {
        item,
        price,
        quantity: e.quantity === undefined ? undefined : Number(e.quantity),
        deleted: e.deleted === 'true',
      };
    });
    const before = structuredClone(sub.items);
    for (const { item, price, quantity, deleted } of changes) {
      if (item && deleted) sub.items.data = sub.items.data.filter((it) => it !== item);
      else if (item) {
        if (price) item.price = structuredClone(price);
        if (quantity !== undefined) item.quantity = quantity;
      } else
        sub.items.data.push(subscriptionItemObject(sub.id, structuredClone(price!), quantity ?? 1, now()));
    }
    if (JSON.stringify(before) !== JSON.stringify(sub.items)) previous.items = before;
  }

  cancelSubscriptionByApi(id: string, request: RequestRef): Subscription {
    const sub = this.get<Subscription>('subscription', id);
    if (sub.status === 'canceled') throw refused(CANCELED_REFUSAL);
    this.queued.push(cancelSubscription(sub, request));
    return sub;
  }
}
