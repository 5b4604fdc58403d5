/**
 * @module Stripe's events, applied: each verified event is read into one change of one account
 * (tokens for a paid pack or period, a pack taken back, the subscription's latest state read back
 * from Stripe) and handed to the store, which applies it with the event's id in one transaction.
 * So a retry, a second server, or two event types for one session change nothing twice, and the
 * order events arrive in does not matter: the state applied is what Stripe says now.
 */
import type { AuditEntry } from '../domain/audit.js';
import { newId } from '../domain/ids.js';
import { fingerprint } from '../domain/ledger.js';
import { type SubscriptionState, subscriptionEffect } from '../domain/payments.js';
import { ProviderError, type ProviderEvent, type SubscriptionRead } from '../payments/provider.js';
import type { LedgerAppend, PaymentChange, StripeEventRecord } from '../store/store.js';
import { actingAs, draftAudit } from './audit.js';
import { now, type PaymentDeps, type ServiceDeps } from './context.js';

/** Who every change made by an event is audited as. */
export const STRIPE_ACTOR = actingAs('stripe');

/** What an event comes to: a change of an account, or a note of why it changes nothing. */
type Plan =
  | { kind: 'change'; change: PaymentChange }
  | { kind: 'note'; accountId: string | null; outcome: StripeEventRecord['outcome']; detail: string };

export type Received =
  | { kind: 'duplicate' }
  | { kind: 'done'; outcome: StripeEventRecord['outcome']; detail: string };

const LIVE = new Set(['active', 'trialing', 'past_due', 'incomplete']);

export class StripeEvents {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly payments: PaymentDeps,
  ) {}

  /** Applies a verified event, at most once; a ProviderError (Stripe unreachable) is thrown, for Stripe to retry. */
  async receive(event: ProviderEvent): Promise<Received> {
    const store = this.deps.store.payments;
    if (await store.seen(event.id)) return { kind: 'duplicate' };
    const plan = await this.plan(event);
    if (plan.kind === 'note') {
      const record = { id: event.id, type: event.type, receivedAt: now(this.deps), ...plan };
      return (await store.note(record))
        ? { kind: 'done', outcome: plan.outcome, detail: plan.detail }
        : { kind: 'duplicate' };
    }
    return store.apply(plan.change, now(this.deps));
  }

  /**
   * The account's subscription read back from Stripe and applied, with no event (an operator's
   * sync): the same rules as an event's, under the operator's name.
   */
  async sync(accountId: string, sub: SubscriptionRead, by: { actor: string }) {
    const change = await this.subscriptionChange(accountId, sub, undefined, by);
    if (change.kind === 'note')
      return { kind: 'done' as const, outcome: change.outcome, detail: change.detail };
    return this.deps.store.payments.apply(change.change, now(this.deps));
  }

  private async plan(event: ProviderEvent): Promise<Plan> {
    try {
      switch (event.kind) {
        case 'checkout':
          return await this.checkout(event);
        case 'subscription':
          return await this.subscription(
            event,
            await this.payments.provider.subscription(event.subscriptionId),
          );
        case 'invoice_paid':
          return await this.invoice(event);
        case 'refund':
          return await this.refund(event);
        case 'other':
          return {
            kind: 'note',
            accountId: null,
            outcome: 'ignored',
            detail: `${event.type}: not an event toolgate acts on`,
          };
      }
    } catch (err) {
      // An object Stripe does not have will not appear on a retry: kept, for the operator to see.
      if (err instanceof ProviderError && err.kind === 'not_found')
        return { kind: 'note', accountId: null, outcome: 'no_effect', detail: err.message };
      throw err;
    }
  }

  private async accountOf(customerId: string | null): Promise<string | undefined> {
    return customerId ? this.deps.store.payments.accountOfCustomer(customerId) : undefined;
  }

  private async checkout(event: Extract<ProviderEvent, { kind: 'checkout' }>): Promise<Plan> {
    const session = await this.payments.provider.session(event.sessionId);
    const accountId = await this.accountOf(session.customerId);
    if (!accountId) return unknownCustomer(session.customerId);
    if (session.mode === 'subscription' && session.subscriptionId)
      return this.subscription(event, await this.payments.provider.subscription(session.subscriptionId));
    if (session.mode !== 'payment')
      return ignored(accountId, `Checkout Session ${session.id} in ${session.mode} mode`);
    if (!session.paid)
      return ignored(
        accountId,
        `Checkout Session ${session.id} not paid yet (async_payment_succeeded will follow)`,
      );
    const priceId = session.priceIds[0] ?? '';
    const { topup: packId } = await this.deps.store.payments.priceUse(priceId);
    const pack = packId ? await this.deps.store.payments.getTopup(packId) : undefined;
    if (!pack) return unknownPrice(accountId, priceId);
    const reason = `pack ${pack.id} (Checkout Session ${session.id})`;
    const entry = this.grantEntry(accountId, pack.tokens, reason, `stripe:checkout:${session.id}`);
    return change({
      event: this.eventOf(event),
      accountId,
      grant: {
        entry,
        note: `granted ${pack.tokens} tokens: ${reason}`,
        audit: this.audit(event.id, 'tokens.grant', accountId, entry.id, { amount: pack.tokens, reason }),
        ...(session.paymentIntent
          ? {
              payment: {
                paymentIntent: session.paymentIntent,
                sessionId: session.id,
                accountId,
                topupId: pack.id,
                tokens: pack.tokens,
              },
            }
          : {}),
      },
    });
  }

  private async subscription(event: ProviderEvent, sub: SubscriptionRead): Promise<Plan> {
    const accountId = await this.accountOf(sub.customerId);
    if (!accountId) return unknownCustomer(sub.customerId);
    return this.subscriptionChange(accountId, sub, event, STRIPE_ACTOR);
  }

  private async subscriptionChange(
    accountId: string,
    sub: SubscriptionState,
    event: ProviderEvent | undefined,
    by: { actor: string },
  ): Promise<Plan> {
    const plan = sub.priceId ? (await this.deps.store.payments.priceUse(sub.priceId)).plan : undefined;
    if (!plan) return unknownPrice(accountId, sub.priceId ?? '(none)');
    const effect = subscriptionEffect(sub, plan, this.payments.fallbackPlan, this.payments.unpaid);
    const details = {
      ...(event ? { event_id: event.id } : { sync: true }),
      subscription: sub.subscriptionId,
      subscription_status: sub.status,
      plan: effect.planId ?? null,
    };
    return change({
      ...(event ? { event: this.eventOf(event) } : {}),
      accountId,
      subscription: {
        state: sub,
        live: LIVE.has(sub.status),
        planId: effect.planId,
        status: effect.status,
        note: `subscription ${sub.subscriptionId} ${sub.status}${effect.planId ? `: plan ${effect.planId}` : ''}${effect.status === 'suspend' ? ', account suspended' : ''}`,
        audit: draftAudit(this.deps, by, 'account.update', accountId, null, details),
      },
    });
  }

  private async invoice(event: Extract<ProviderEvent, { kind: 'invoice_paid' }>): Promise<Plan> {
    const accountId = await this.accountOf(event.customerId);
    if (!accountId) return unknownCustomer(event.customerId);
    if (!event.subscriptionId)
      return ignored(accountId, `invoice ${event.invoiceId} is not a subscription's`);
    const sub = await this.payments.provider.subscription(event.subscriptionId);
    const state = await this.subscriptionChange(accountId, sub, event, STRIPE_ACTOR);
    if (state.kind === 'note') return state;
    const planId = (await this.deps.store.payments.priceUse(sub.priceId ?? '')).plan;
    const plan = planId ? await this.deps.store.plans.get(planId) : undefined;
    const tokens = plan?.periodTokens ?? 0;
    if (tokens <= 0) return state;
    const reason = `plan ${planId} period (invoice ${event.invoiceId})`;
    const entry = this.grantEntry(accountId, tokens, reason, `stripe:invoice:${event.invoiceId}`);
    state.change.grant = {
      entry,
      note: `granted ${tokens} tokens: ${reason}`,
      audit: this.audit(event.id, 'tokens.grant', accountId, entry.id, { amount: tokens, reason }),
    };
    return state;
  }

  private async refund(event: Extract<ProviderEvent, { kind: 'refund' }>): Promise<Plan> {
    const paid = event.paymentIntent
      ? await this.deps.store.payments.paymentOf(event.paymentIntent)
      : undefined;
    if (!paid) {
      const accountId = (await this.accountOf(event.customerId)) ?? null;
      return {
        kind: 'note',
        accountId,
        outcome: 'no_effect',
        detail: `charge ${event.chargeId}: no pack paid with it`,
      };
    }
    if (!event.full)
      return ignored(
        paid.accountId,
        `charge ${event.chargeId} partly refunded: no tokens taken back (toolgate tokens adjust, if any should be)`,
      );
    const reason = `refund of pack ${paid.topupId} (PaymentIntent ${paid.paymentIntent})`;
    const entry: LedgerAppend = {
      id: newId('led', this.deps.clock.now()),
      accountId: paid.accountId,
      kind: 'adjust',
      amount: -paid.tokens,
      reason,
      idempotencyKey: `stripe:refund:${paid.paymentIntent}`,
      // The most it may take, not what the balance allows: a retry after the balance moved is the same request.
      requestHash: fingerprint({ kind: 'adjust', amount: -paid.tokens, reason }),
      createdAt: now(this.deps),
    };
    return change({
      event: this.eventOf(event),
      accountId: paid.accountId,
      takeBack: {
        entry,
        note: reason,
        audit: this.audit(event.id, 'tokens.adjust', paid.accountId, entry.id, {
          amount: -paid.tokens,
          reason,
        }),
      },
    });
  }

  private grantEntry(
    accountId: string,
    amount: number,
    reason: string,
    idempotencyKey: string,
  ): LedgerAppend {
    return {
      id: newId('led', this.deps.clock.now()),
      accountId,
      kind: 'grant',
      amount,
      reason,
      idempotencyKey,
      requestHash: fingerprint({ kind: 'grant', amount, reason }),
      createdAt: now(this.deps),
    };
  }

  private eventOf(event: ProviderEvent) {
    return { id: event.id, type: event.type, receivedAt: now(this.deps) };
  }

  private audit(
    eventId: string,
    action: 'tokens.grant' | 'tokens.adjust',
    accountId: string,
    entryId: string,
    details: { amount: number; reason: string },
  ): AuditEntry {
    return draftAudit(this.deps, STRIPE_ACTOR, action, accountId, entryId, { event_id: eventId, ...details });
  }
}

const change = (c: PaymentChange): Plan => ({ kind: 'change', change: c });

const unknownCustomer = (customerId: string | null): Plan => ({
  kind: 'note',
  accountId: null,
  outcome: 'unknown_customer',
  detail: `customer ${customerId ?? '(none)'} is no account's`,
});

const unknownPrice = (accountId: string, priceId: string): Plan => ({
  kind: 'note',
  accountId,
  outcome: 'unknown_price',
  detail: `price ${priceId} is no plan's or pack's (toolgate plans set <plan> --stripe-price, toolgate topups set)`,
});

const ignored = (accountId: string, detail: string): Plan => ({
  kind: 'note',
  accountId,
  outcome: 'ignored',
  detail,
});
