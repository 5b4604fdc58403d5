/**
 * @module The payment provider on Stripe's official library: every call to Stripe and every
 * signature check goes through it. The library is loaded at the first thing that needs it (some
 * megabytes of heap a server that only serves tools never carries).
 */
import type Stripe from 'stripe';
import type { Clock } from '../domain/clock.js';
import { isSubscriptionStatus } from '../domain/payments.js';
import {
  type CheckoutRequest,
  type CheckoutSession,
  type PaymentProvider,
  type PriceInfo,
  ProviderError,
  type ProviderEvent,
  SignatureError,
  type SubscriptionRead,
} from './provider.js';

export interface StripeSettings {
  secretKey: string;
  webhookSecret: string | undefined;
  /** A Stripe-compatible API (stripe-mock, a test server): its scheme, host and port are used. */
  apiUrl?: string | undefined;
}

/** Seconds a signed event stays acceptable after Stripe signed it (Stripe's own default). */
export const SIGNATURE_TOLERANCE = 300;
/** How long a price read from Stripe is shown without asking again. */
const PRICE_TTL_MS = 5 * 60_000;

const idOf = (v: string | { id: string } | null | undefined): string | null =>
  v === null || v === undefined ? null : typeof v === 'string' ? v : v.id;

interface Loaded {
  lib: typeof Stripe;
  client: Stripe;
}

export class StripeGateway implements PaymentProvider {
  private loaded: Promise<Loaded> | undefined;
  private readonly prices = new Map<string, { at: number; price: PriceInfo }>();

  constructor(
    private readonly settings: StripeSettings,
    private readonly clock: Clock,
  ) {}

  /** The library and its client, made once. */
  private load(): Promise<Loaded> {
    this.loaded ??= import('stripe').then(({ default: lib }) => ({ lib, client: this.client(lib) }));
    return this.loaded;
  }

  private client(lib: typeof Stripe): Stripe {
    const { settings } = this;
    const api = settings.apiUrl ? new URL(settings.apiUrl) : undefined;
    return new lib(settings.secretKey, {
      maxNetworkRetries: 2,
      timeout: 20_000,
      appInfo: { name: 'toolgate' },
      ...(api
        ? {
            host: api.hostname,
            port: api.port || (api.protocol === 'http:' ? 80 : 443),
            protocol: api.protocol === 'http:' ? 'http' : 'https',
          }
        : {}),
    });
  }

  pageOrigins(): string[] {
    // A Stripe-compatible API (a test server, stripe-mock) serves its pages itself.
    return this.settings.apiUrl
      ? [new URL(this.settings.apiUrl).origin]
      : ['https://checkout.stripe.com', 'https://billing.stripe.com'];
  }

  async price(id: string): Promise<PriceInfo> {
    const kept = this.prices.get(id);
    if (kept && this.clock.now() - kept.at < PRICE_TTL_MS) return kept.price;
    const p = await this.call(`price ${id}`, (s) => s.prices.retrieve(id));
    const price: PriceInfo = {
      id: p.id,
      type: p.type === 'recurring' ? 'recurring' : 'one_time',
      active: p.active,
      unitAmount: p.unit_amount ?? null,
      currency: p.currency,
      interval: p.recurring?.interval ?? null,
      intervalCount: p.recurring?.interval_count ?? 1,
    };
    this.prices.set(id, { at: this.clock.now(), price });
    return price;
  }

  async createCustomer(accountId: string, name: string): Promise<string> {
    // One customer per account even when two clicks race: Stripe answers a repeated key with the first.
    const customer = await this.call('customer', (s) =>
      s.customers.create(
        { name, metadata: { account_id: accountId } },
        { idempotencyKey: `toolgate-customer-${accountId}` },
      ),
    );
    return customer.id;
  }

  async checkout(r: CheckoutRequest): Promise<{ id: string; url: string }> {
    const session = await this.call('Checkout Session', (s) =>
      s.checkout.sessions.create({
        mode: r.mode,
        customer: r.customerId,
        client_reference_id: r.accountId,
        line_items: [{ price: r.priceId, quantity: 1 }],
        success_url: r.successUrl,
        cancel_url: r.cancelUrl,
        metadata: r.metadata,
        ...(r.mode === 'subscription'
          ? { subscription_data: { metadata: r.metadata } }
          : { payment_intent_data: { metadata: r.metadata } }),
      }),
    );
    if (!session.url) throw new ProviderError('Stripe made a Checkout Session without a URL.', 'unavailable');
    return { id: session.id, url: session.url };
  }

  async portal(customerId: string, returnUrl: string): Promise<string> {
    const session = await this.call('billing portal session', (s) =>
      s.billingPortal.sessions.create({ customer: customerId, return_url: returnUrl }),
    );
    return session.url;
  }

  async session(id: string): Promise<CheckoutSession> {
    const s = await this.call(`Checkout Session ${id}`, (s) =>
      s.checkout.sessions.retrieve(id, { expand: ['line_items'] }),
    );
    return {
      id: s.id,
      mode: s.mode === 'subscription' ? 'subscription' : s.mode === 'payment' ? 'payment' : 'setup',
      customerId: idOf(s.customer),
      paid: s.payment_status === 'paid' || s.payment_status === 'no_payment_required',
      paymentIntent: idOf(s.payment_intent),
      subscriptionId: idOf(s.subscription),
      priceIds: (s.line_items?.data ?? []).map((item) => idOf(item.price)).filter((p) => p !== null),
    };
  }

  async subscription(id: string): Promise<SubscriptionRead> {
    const readAt = this.clock.now();
    return readSubscription(
      await this.call(`subscription ${id}`, (s) => s.subscriptions.retrieve(id)),
      readAt,
    );
  }

  async subscriptionsOf(customerId: string): Promise<SubscriptionRead[]> {
    const readAt = this.clock.now();
    const list = await this.call(`subscriptions of ${customerId}`, (s) =>
      s.subscriptions.list({ customer: customerId, status: 'all', limit: 10 }),
    );
    return list.data
      .map((s) => readSubscription(s, readAt))
      .sort((a, b) => (b.periodStart ?? 0) - (a.periodStart ?? 0));
  }

  async changePrice(subscriptionId: string, priceId: string): Promise<void> {
    const sub = await this.call(`subscription ${subscriptionId}`, (s) =>
      s.subscriptions.retrieve(subscriptionId),
    );
    const item = sub.items.data[0];
    if (!item) throw new ProviderError(`Subscription ${subscriptionId} has no item to change.`, 'refused');
    await this.call(`subscription ${subscriptionId}`, (s) =>
      s.subscriptions.update(subscriptionId, {
        items: [{ id: item.id, price: priceId }],
        proration_behavior: 'create_prorations',
      }),
    );
  }

  async verify(rawBody: Buffer, signature: string | undefined, nowMs: number): Promise<ProviderEvent> {
    if (!this.settings.webhookSecret) throw new SignatureError('TOOLGATE_STRIPE_WEBHOOK_SECRET is not set.');
    if (!signature) throw new SignatureError('No Stripe-Signature header.');
    const { client } = await this.load();
    let event: Stripe.Event;
    try {
      event = client.webhooks.constructEvent(
        rawBody,
        signature,
        this.settings.webhookSecret,
        SIGNATURE_TOLERANCE,
        undefined,
        nowMs,
      );
    } catch (err) {
      throw new SignatureError(
        (err as Error).message.includes('tolerance')
          ? 'The Stripe-Signature timestamp is older than 5 minutes.'
          : 'The Stripe-Signature does not match the body.',
      );
    }
    return readEvent(event);
  }

  /** A Stripe call, its failure said in toolgate's words (Stripe's message names no secret). */
  private async call<T>(what: string, fn: (s: Stripe) => Promise<T>): Promise<T> {
    const { lib: Stripe, client } = await this.load();
    try {
      return await fn(client);
    } catch (err) {
      if (!(err instanceof Stripe.errors.StripeError)) throw err;
      if (err.code === 'resource_missing') throw new ProviderError(`Stripe has no ${what}.`, 'not_found');
      if (err instanceof Stripe.errors.StripeInvalidRequestError)
        throw new ProviderError(`Stripe refused the ${what}: ${err.message}`, 'refused');
      if (
        err instanceof Stripe.errors.StripeAuthenticationError ||
        err instanceof Stripe.errors.StripePermissionError
      )
        throw new ProviderError(
          `Stripe refused TOOLGATE_STRIPE_SECRET_KEY (${err.type}): check the key and its permissions.`,
          'refused',
        );
      throw new ProviderError(`Stripe could not be reached for the ${what}: ${err.message}`, 'unavailable');
    }
  }
}

function readSubscription(s: Stripe.Subscription, readAt: number): SubscriptionRead {
  // Since API version 2025-03-31 the period is the items' (toolgate sells one price per subscription).
  const item = s.items.data[0];
  return {
    subscriptionId: s.id,
    customerId: idOf(s.customer) ?? '',
    status: isSubscriptionStatus(s.status) ? s.status : 'incomplete',
    priceId: item ? idOf(item.price) : null,
    periodStart: item?.current_period_start ?? null,
    periodEnd: item?.current_period_end ?? null,
    readAt,
  };
}

/** What toolgate acts on in an event: ids only; the state itself is read back from Stripe. */
export function readEvent(event: Stripe.Event): ProviderEvent {
  const base = { id: event.id, type: event.type, created: event.created };
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded': {
      const s = event.data.object;
      return {
        ...base,
        kind: 'checkout',
        sessionId: s.id,
        customerId: idOf(s.customer),
        paid: s.payment_status === 'paid',
      };
    }
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted':
    case 'customer.subscription.paused':
    case 'customer.subscription.resumed': {
      const s = event.data.object;
      return { ...base, kind: 'subscription', subscriptionId: s.id, customerId: idOf(s.customer) ?? '' };
    }
    case 'invoice.paid': {
      const i = event.data.object;
      const sub = i.parent?.subscription_details?.subscription;
      return {
        ...base,
        kind: 'invoice_paid',
        invoiceId: i.id ?? '',
        customerId: idOf(i.customer),
        subscriptionId: idOf(sub),
      };
    }
    case 'charge.refunded': {
      const c = event.data.object;
      return {
        ...base,
        kind: 'refund',
        chargeId: c.id,
        customerId: idOf(c.customer),
        paymentIntent: idOf(c.payment_intent),
        full: c.refunded,
      };
    }
    default:
      return { ...base, kind: 'other' };
  }
}
