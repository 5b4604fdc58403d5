/**
 * @module Money's use cases: token packs, what an account can buy and its Checkout and portal
 * sessions, Stripe's webhook, and what operators see and mend of an account's billing. Prices stay
 * in Stripe: toolgate keeps which price is which plan or pack, and reads amounts from Stripe.
 */
import { isoSeconds } from '../domain/clock.js';
import { fail, ok, type Result } from '../domain/errors.js';
import {
  formatPrice,
  type Topup,
  validatePackId,
  validatePackTokens,
  validatePriceId,
} from '../domain/payments.js';
import { type PriceInfo, ProviderError, SignatureError } from '../payments/provider.js';
import type { StripeEventRecord } from '../store/store.js';
import { type AuditContext, draftAudit } from './audit.js';
import { now, type PaymentDeps, type ServiceDeps } from './context.js';
import { type Received, StripeEvents } from './stripe-events.js';

export interface PriceView {
  id: string;
  /** As customers see it: `$19.00 / month`. */
  label: string;
  unit_amount: number | null;
  currency: string;
  interval: string | null;
}

export interface TopupView {
  id: string;
  tokens: number;
  stripe_price: string;
  created_at: string;
  updated_at: string;
}

/** What an account may buy, as its Billing page shows it. */
export interface Offers {
  plans: {
    id: string;
    /** What customers see: the display name, else the id. */
    name: string;
    description: string | null;
    price: PriceView;
    period_tokens: number | null;
    current: boolean;
  }[];
  topups: { id: string; tokens: number; price: PriceView }[];
  /** Whether the account has a Stripe customer (the portal can open). */
  customer: boolean;
  /** Whether it has a subscription that serves: a plan is changed through it, not a new Checkout. */
  subscribed: boolean;
}

export interface BillingShow {
  account_id: string;
  customer: string | null;
  subscription: string | null;
  subscription_status: string | null;
  price: string | null;
  current_period_start: string | null;
  current_period_end: string | null;
  events: { id: string; type: string; received_at: string; outcome: string; detail: string }[];
}

const isoOrNull = (s: number | null | undefined) => (s === null || s === undefined ? null : isoSeconds(s));

const OFF =
  'Payments are off: set TOOLGATE_STRIPE_SECRET_KEY (and TOOLGATE_STRIPE_WEBHOOK_SECRET) on the server; docs/payments.md.';
const SERVING = new Set(['active', 'trialing', 'past_due']);

export const topupView = (t: Topup): TopupView => ({
  id: t.id,
  tokens: t.tokens,
  stripe_price: t.stripePrice,
  created_at: isoSeconds(t.createdAt),
  updated_at: isoSeconds(t.updatedAt),
});

const priceView = (p: PriceInfo): PriceView => ({
  id: p.id,
  label: formatPrice(p),
  unit_amount: p.unitAmount,
  currency: p.currency,
  interval: p.interval,
});

const eventView = (e: StripeEventRecord) => ({
  id: e.id,
  type: e.type,
  received_at: isoSeconds(e.receivedAt),
  outcome: e.outcome,
  detail: e.detail,
});

/** Where a customer comes back to from Stripe (Checkout, the portal): the account's Billing page in the console. */
export const billingUrl = (publicUrl: string, accountId: string) =>
  `${publicUrl}/console/a/${encodeURIComponent(accountId)}/billing`;

/** A provider's failure as an answer: its message names what, never a secret. */
export function providerFailure(err: unknown): Result<never> {
  if (!(err instanceof ProviderError)) throw err;
  return fail(err.kind === 'unavailable' ? 'upstream_error' : 'invalid_arguments', err.message);
}

/**
 * Checks with Stripe that `priceId` may sell a plan (recurring) or a pack (one-time), and that no
 * other plan or pack sells it already.
 */
export async function checkPrice(
  deps: ServiceDeps,
  priceId: unknown,
  want: 'recurring' | 'one_time',
  owner: { plan?: string; topup?: string },
): Promise<Result<string>> {
  const valid = validatePriceId(priceId);
  if (!valid.ok) return valid;
  if (!deps.payments) return fail('invalid_arguments', `A Stripe price cannot be checked. ${OFF}`);
  let price: PriceInfo;
  try {
    price = await deps.payments.provider.price(valid.value);
  } catch (err) {
    return providerFailure(err);
  }
  if (price.type !== want)
    return fail(
      'invalid_arguments',
      want === 'recurring'
        ? `Price ${price.id} is one-time: a plan's price must be recurring (a monthly or yearly price in Stripe).`
        : `Price ${price.id} is recurring: a pack's price must be one-time.`,
    );
  if (!price.active) return fail('invalid_arguments', `Price ${price.id} is archived in Stripe.`);
  const use = await deps.store.payments.priceUse(price.id);
  const other =
    use.plan && use.plan !== owner.plan
      ? `plan ${use.plan}`
      : use.topup && use.topup !== owner.topup
        ? `pack ${use.topup}`
        : undefined;
  if (other)
    return fail('conflict', `Price ${price.id} already sells ${other}: one price, one plan or pack.`);
  return ok(price.id);
}

export class PaymentService {
  private readonly events: StripeEvents | undefined;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly payments: PaymentDeps | undefined = deps.payments,
  ) {
    this.events = payments && new StripeEvents(deps, payments);
  }

  /** Where Checkout and the portal live: the Billing page's forms are redirected there. */
  pageOrigins(): string[] {
    return this.payments?.provider.pageOrigins() ?? [];
  }

  /** Whether payments are on (a secret key is configured). */
  get enabled(): boolean {
    return this.payments !== undefined;
  }

  async listTopups(): Promise<TopupView[]> {
    return (await this.deps.store.payments.listTopups()).map(topupView);
  }

  async setTopup(
    id: string,
    input: { tokens?: unknown; stripe_price?: unknown },
    by?: AuditContext,
  ): Promise<Result<TopupView>> {
    const valid = validatePackId(id);
    if (!valid.ok) return valid;
    const tokens = validatePackTokens(input.tokens);
    if (!tokens.ok) return tokens;
    const price = await checkPrice(this.deps, input.stripe_price, 'one_time', { topup: id });
    if (!price.ok) return price;
    const existing = await this.deps.store.payments.getTopup(id);
    const t = now(this.deps);
    const topup: Topup = {
      id,
      tokens: tokens.value,
      stripePrice: price.value,
      createdAt: existing?.createdAt ?? t,
      updatedAt: t,
    };
    const audit = draftAudit(this.deps, by, 'topup.put', null, id, {
      tokens: topup.tokens,
      stripe_price: topup.stripePrice,
    });
    await this.deps.store.payments.putTopup(topup, audit);
    return ok(topupView(topup));
  }

  async removeTopup(id: string, by?: AuditContext): Promise<Result<TopupView>> {
    const audit = draftAudit(this.deps, by, 'topup.remove', null, id, {});
    const removed = await this.deps.store.payments.removeTopup(id, audit);
    return removed ? ok(topupView(removed)) : fail('not_found', `No pack "${id}".`);
  }

  /** Priced plans and packs with their prices from Stripe; a price Stripe no longer has is left out. */
  async offers(accountId: string): Promise<Result<Offers>> {
    const payments = this.payments;
    const account = await this.deps.store.accounts.get(accountId);
    if (!account) return fail('not_found', `No account "${accountId}".`);
    if (!payments) return ok({ plans: [], topups: [], customer: false, subscribed: false });
    const price = async (id: string) => payments.provider.price(id).then(priceView, () => undefined);
    const plans = (await this.deps.store.plans.list()).filter((p) => p.stripePrice);
    const topups = await this.deps.store.payments.listTopups();
    const [planPrices, topupPrices] = await Promise.all([
      Promise.all(plans.map((p) => price(p.stripePrice!))),
      Promise.all(topups.map((t) => price(t.stripePrice))),
    ]);
    return ok({
      plans: plans.flatMap((p, i) => {
        const pv = planPrices[i];
        return pv
          ? [
              {
                id: p.id,
                name: p.name ?? p.id,
                description: p.description ?? null,
                price: pv,
                period_tokens: p.periodTokens ?? null,
                current: p.id === account.planId,
              },
            ]
          : [];
      }),
      topups: topups.flatMap((t, i) => {
        const pv = topupPrices[i];
        return pv ? [{ id: t.id, tokens: t.tokens, price: pv }] : [];
      }),
      customer: account.billing !== undefined,
      subscribed: SERVING.has(account.billing?.status ?? ''),
    });
  }

  /**
   * A Checkout Session for a plan or a pack, for the account's Stripe customer (made once); an
   * account whose subscription serves changes plan through Stripe instead (`changed`: no page to go to).
   */
  async checkout(
    accountId: string,
    what: { plan: string } | { topup: string },
    urls: { success: string; cancel: string },
  ): Promise<Result<{ url: string } | { changed: string }>> {
    if (!this.payments) return fail('not_found', OFF);
    const account = await this.deps.store.accounts.get(accountId);
    if (!account) return fail('not_found', `No account "${accountId}".`);
    if (account.status === 'closed') return fail('account_closed');
    const sale = await this.sale(what);
    if (!sale.ok) return sale;
    try {
      const sub = account.billing;
      if (sale.value.mode === 'subscription' && sub?.subscriptionId && SERVING.has(sub.status ?? '')) {
        if (sub.priceId === sale.value.priceId)
          return fail('conflict', `The account is on plan ${sale.value.name} already.`);
        await this.payments.provider.changePrice(sub.subscriptionId, sale.value.priceId);
        return ok({ changed: sale.value.name });
      }
      const customerId = await this.customerOf(account.id, account.name, account.billing?.customerId);
      return ok(
        await this.payments.provider.checkout({
          mode: sale.value.mode,
          customerId,
          accountId,
          priceId: sale.value.priceId,
          successUrl: urls.success,
          cancelUrl: urls.cancel,
          metadata: {
            account_id: accountId,
            [sale.value.mode === 'subscription' ? 'plan' : 'topup']: sale.value.name,
          },
        }),
      );
    } catch (err) {
      return providerFailure(err);
    }
  }

  private async sale(what: { plan: string } | { topup: string }) {
    if ('plan' in what) {
      const plan = await this.deps.store.plans.get(what.plan);
      if (!plan?.stripePrice) return fail('not_found', `Plan "${what.plan}" is not for sale.`);
      return ok({ mode: 'subscription' as const, priceId: plan.stripePrice, name: plan.id });
    }
    const topup = await this.deps.store.payments.getTopup(what.topup);
    if (!topup) return fail('not_found', `No pack "${what.topup}".`);
    return ok({ mode: 'payment' as const, priceId: topup.stripePrice, name: topup.id });
  }

  /** The account's Stripe customer, made and linked once (servers racing agree on the first). */
  private async customerOf(accountId: string, name: string, known: string | undefined): Promise<string> {
    if (known) return known;
    const made = await this.payments!.provider.createCustomer(accountId, name);
    const audit = draftAudit(this.deps, { actor: 'system:payments' }, 'account.update', accountId, null, {
      stripe_customer: made,
    });
    return (await this.deps.store.payments.linkCustomer(accountId, made, audit)) ?? made;
  }

  /** A Stripe customer portal session for the account (it must have a customer). */
  async portal(accountId: string, returnUrl: string): Promise<Result<string>> {
    if (!this.payments) return fail('not_found', OFF);
    const account = await this.deps.store.accounts.get(accountId);
    if (!account) return fail('not_found', `No account "${accountId}".`);
    if (!account.billing)
      return fail('conflict', `Account ${accountId} has no Stripe customer yet (nothing bought).`);
    try {
      return ok(await this.payments.provider.portal(account.billing.customerId, returnUrl));
    } catch (err) {
      return providerFailure(err);
    }
  }

  /**
   * Stripe's webhook: the raw body verified against its signature, then applied at most once.
   * A bad signature is invalid_arguments (400, nothing changed); Stripe unreachable or the store
   * down throws, for the route to answer 5xx and Stripe to retry.
   */
  async receive(rawBody: Buffer, signature: string | undefined): Promise<Result<Received>> {
    if (!this.payments || !this.events) return fail('not_found', OFF);
    let event: Awaited<ReturnType<PaymentDeps['provider']['verify']>>;
    try {
      event = await this.payments.provider.verify(rawBody, signature, this.deps.clock.now());
    } catch (err) {
      if (err instanceof SignatureError) return fail('invalid_arguments', err.message);
      throw err;
    }
    return ok(await this.events.receive(event));
  }

  /** What operators see of an account's billing: customer, subscription, and its latest events. */
  async show(accountId: string, limit = 20): Promise<Result<BillingShow>> {
    const account = await this.deps.store.accounts.get(accountId);
    if (!account) return fail('not_found', `No account "${accountId}".`);
    const b = account.billing;
    const events = await this.deps.store.payments.events(accountId, limit);
    return ok({
      account_id: accountId,
      customer: b?.customerId ?? null,
      subscription: b?.subscriptionId ?? null,
      subscription_status: b?.status ?? null,
      price: b?.priceId ?? null,
      current_period_start: isoOrNull(b?.periodStart),
      current_period_end: isoOrNull(b?.periodEnd),
      events: events.map(eventView),
    });
  }

  /** Events that matched no account (unknown customers), newest first. */
  async unmatched(limit = 20) {
    return (await this.deps.store.payments.events(null, limit)).map(eventView);
  }

  /** Reads the account's subscription back from Stripe and applies it, as an event would. */
  async sync(accountId: string, by: AuditContext): Promise<Result<{ outcome: string; detail: string }>> {
    if (!this.payments || !this.events) return fail('not_found', OFF);
    const account = await this.deps.store.accounts.get(accountId);
    if (!account) return fail('not_found', `No account "${accountId}".`);
    if (!account.billing) return ok({ outcome: 'no_effect', detail: 'the account has no Stripe customer' });
    try {
      const subs = await this.payments.provider.subscriptionsOf(account.billing.customerId);
      const sub = subs.find((s) => SERVING.has(s.status)) ?? subs[0];
      if (!sub) return ok({ outcome: 'no_effect', detail: 'the customer has no subscription in Stripe' });
      const applied = await this.events.sync(accountId, sub, by);
      return ok(
        applied.kind === 'duplicate'
          ? { outcome: 'no_effect', detail: '' }
          : { outcome: applied.outcome, detail: applied.detail },
      );
    } catch (err) {
      return providerFailure(err);
    }
  }
}
