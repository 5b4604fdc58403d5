/**
 * @module What toolgate asks of its payment provider, in toolgate's words: prices read, customers,
 * Checkout and portal sessions made, subscriptions read back and changed, and events verified and
 * read. Stripe's official library implements it (stripe-gateway.ts); the use cases know only this.
 */
import type { SubscriptionState } from '../domain/payments.js';

/** A price as toolgate shows and checks it. */
export interface PriceInfo {
  id: string;
  type: 'recurring' | 'one_time';
  active: boolean;
  unitAmount: number | null;
  currency: string;
  interval: string | null;
  intervalCount: number;
}

export interface CheckoutRequest {
  mode: 'subscription' | 'payment';
  customerId: string;
  accountId: string;
  priceId: string;
  successUrl: string;
  cancelUrl: string;
  /** What it buys, kept on the session for the operator (never trusted to decide a grant). */
  metadata: Record<string, string>;
}

/** A Checkout Session read back, with the prices it sold. */
export interface CheckoutSession {
  id: string;
  mode: 'subscription' | 'payment' | 'setup';
  customerId: string | null;
  paid: boolean;
  paymentIntent: string | null;
  subscriptionId: string | null;
  priceIds: string[];
}

/** A subscription read back: its state and its customer. */
export type SubscriptionRead = SubscriptionState & { customerId: string };

/** A verified event, read into what toolgate acts on. */
export type ProviderEvent = { id: string; type: string; created: number } & (
  | { kind: 'checkout'; sessionId: string; customerId: string | null; paid: boolean }
  | { kind: 'subscription'; subscriptionId: string; customerId: string }
  | { kind: 'invoice_paid'; invoiceId: string; customerId: string | null; subscriptionId: string | null }
  | {
      kind: 'refund';
      chargeId: string;
      customerId: string | null;
      paymentIntent: string | null;
      full: boolean;
    }
  | { kind: 'other' }
);

/** The provider's answer was a refusal or a failure: said to operators, never with a secret. */
export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  constructor(
    message: string,
    /** not_found: no such object; refused: a bad request; unavailable: try again later. */
    readonly kind: 'not_found' | 'refused' | 'unavailable',
  ) {
    super(message);
  }
}

/** A signature that does not verify (missing, wrong, or older than the tolerance). */
export class SignatureError extends Error {
  override readonly name = 'SignatureError';
}

export interface PaymentProvider {
  price(id: string): Promise<PriceInfo>;
  createCustomer(accountId: string, name: string): Promise<string>;
  checkout(request: CheckoutRequest): Promise<{ id: string; url: string }>;
  portal(customerId: string, returnUrl: string): Promise<string>;
  session(id: string): Promise<CheckoutSession>;
  subscription(id: string): Promise<SubscriptionRead>;
  /** The customer's subscriptions, newest first (a sync finds the account's current one). */
  subscriptionsOf(customerId: string): Promise<SubscriptionRead[]>;
  /** Moves the subscription to another price, prorated (a plan change of a subscribed account). */
  changePrice(subscriptionId: string, priceId: string): Promise<void>;
  /** The origins of its hosted pages (Checkout, the portal), which the Billing page's forms are redirected to. */
  pageOrigins(): string[];
  /** Verifies the raw body against its signature header at `nowMs`; throws SignatureError. */
  verify(rawBody: Buffer, signature: string | undefined, nowMs: number): Promise<ProviderEvent>;
}
