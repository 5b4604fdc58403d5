/**
 * Stripe's events through POST /webhooks/stripe, on both backends: signatures checked by the
 * official library, packs granted once per Checkout Session, a subscription's state following
 * Stripe's (read back, so order does not matter), period tokens once per invoice, refunds, the
 * fallback plan, unknown customers and prices kept with no effect, and Stripe down answered 503.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { callTool } from '../calls.js';
import {
  BACKENDS,
  balanceAndLedger,
  checkoutFor,
  newAccount,
  type PaidApp,
  paidApp,
  sellPlanAndPack,
} from './paid-app.js';

describe.each(BACKENDS)('Stripe webhooks on %s', (backend) => {
  let h: PaidApp;
  beforeEach(async () => {
    h = await paidApp(backend);
  });
  afterEach(async () => {
    await h.close();
  });

  const post = (body: string, headers: Record<string, string>) =>
    fetch(h.webhookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });

  it('refuses a missing, wrong, stale or tampered signature with 400, and changes nothing', async () => {
    await sellPlanAndPack(h);
    const accountId = await newAccount(h);
    const sessionId = await checkoutFor(h, accountId, { topup: 'small' });
    const [completed] = h.fake.completeCheckout(sessionId);
    const payload = JSON.stringify(completed);
    const cases: [string, Record<string, string>, string][] = [
      ['missing', {}, payload],
      [
        'wrong secret',
        { 'stripe-signature': h.fake.sign(payload, { secret: 'whsec_not_the_endpoints_secret' }) },
        payload,
      ],
      [
        'stale',
        { 'stripe-signature': h.fake.sign(payload, { timestamp: Math.floor(Date.now() / 1000) - 301 }) },
        payload,
      ],
      [
        'tampered',
        { 'stripe-signature': h.fake.sign(payload) },
        payload.replace('"livemode":false', '"livemode":true'),
      ],
      ['garbage', { 'stripe-signature': 't=1,v1=00' }, payload],
    ];
    for (const [name, headers, body] of cases) {
      const r = await post(body, headers);
      expect(r.status, name).toBe(400);
      expect(((await r.json()) as { code: string }).code).toBe('invalid_arguments');
    }
    expect((await h.store.accounts.get(accountId))!.tokenBalance).toBe(0);
    expect(await h.store.payments.seen(completed!.id)).toBe(false);
    // The same event, signed, is then applied.
    expect(await h.deliver([completed!])).toEqual([200]);
    expect((await h.store.accounts.get(accountId))!.tokenBalance).toBe(500);
  });

  it('grants a paid pack once per Checkout Session: the same event twice, and through two event types', async () => {
    await sellPlanAndPack(h);
    const accountId = await newAccount(h, 10);
    const sessionId = await checkoutFor(h, accountId, { topup: 'small' });
    const [completed] = h.fake.completeCheckout(sessionId);
    expect(await h.deliver([completed!, completed!])).toEqual([200, 200]);
    // Stripe sends async_payment_succeeded for a delayed payment; for this session it must not grant again.
    const again = h.fake.event('checkout.session.async_payment_succeeded', completed!.data.object);
    expect(await h.deliver([again])).toEqual([200]);
    expect(await balanceAndLedger(h.store, accountId)).toEqual({ balance: 510, ledger: 510 });
    const entries = await h.store.ledger.list(accountId, { limit: 10 });
    const grant = entries.find((e) => e.reason?.includes(sessionId));
    expect(grant?.reason).toBe(`pack small (Checkout Session ${sessionId})`);
    const audit = await h.store.audit.list({ limit: 50, accountId });
    const byStripe = audit.filter((a) => a.actor === 'stripe');
    expect(byStripe).toHaveLength(1);
    expect(byStripe[0]).toMatchObject({
      action: 'tokens.grant',
      details: { event_id: completed!.id, amount: 500 },
    });
    const shown = await h.services.payments.show(accountId);
    expect(shown.ok && shown.value.events.map((e) => e.outcome).sort()).toEqual(['applied', 'no_effect']);
  });

  it('grants a delayed payment once, whichever of its two events finds it paid', async () => {
    await sellPlanAndPack(h);
    const accountId = await newAccount(h);
    const sessionId = await checkoutFor(h, accountId, { topup: 'small' });
    // The session is read back from Stripe: by then it is paid, so the first event may grant.
    const [completed, succeeded] = h.fake.completeCheckout(sessionId, { async: true });
    expect(completed!.data.object).toMatchObject({ payment_status: 'unpaid' });
    expect(await h.deliver([completed!, succeeded!, succeeded!])).toEqual([200, 200, 200]);
    expect(await balanceAndLedger(h.store, accountId)).toEqual({ balance: 500, ledger: 500 });
  });

  it("follows a subscription: plan from its price, Stripe's status and period, period tokens once per invoice", async () => {
    await sellPlanAndPack(h, 1000);
    const accountId = await newAccount(h);
    const sessionId = await checkoutFor(h, accountId, { plan: 'pro' });
    const events = h.fake.completeCheckout(sessionId);
    expect(events.map((e) => e.type)).toEqual([
      'checkout.session.completed',
      'customer.subscription.created',
      'invoice.paid',
    ]);
    expect(await h.deliver([...events, ...events])).toEqual([200, 200, 200, 200, 200, 200]);
    const account = (await h.store.accounts.get(accountId))!;
    expect(account.planId).toBe('pro');
    expect(account.billing).toMatchObject({ status: 'active' });
    expect(await balanceAndLedger(h.store, accountId)).toEqual({ balance: 1000, ledger: 1000 });
    const key = await h.services.keys.create(accountId, 'k');
    if (!key.ok) throw new Error('no key');
    const billing = await callTool(h.url, key.value.key, 'get_billing', {});
    expect(billing.data.results).toMatchObject({ plan: 'pro', subscription_status: 'active' });
    const start = account.billing!.periodStart!;
    expect(billing.data.results.current_period_start).toBe(
      new Date(start * 1000).toISOString().replace('.000', ''),
    );
    // A new period: a new invoice, its tokens granted once more.
    const subscriptionId = account.billing!.subscriptionId!;
    const renewal = h.fake.renewSubscription(subscriptionId);
    expect(await h.deliver([...renewal, ...renewal])).toEqual([200, 200, 200, 200]);
    expect(await balanceAndLedger(h.store, accountId)).toEqual({ balance: 2000, ledger: 2000 });
  });

  it('applies the latest state whatever order events arrive in; past_due serves; deleted falls back', async () => {
    await sellPlanAndPack(h);
    const accountId = await newAccount(h, 100);
    await h.deliver(h.fake.completeCheckout(await checkoutFor(h, accountId, { plan: 'pro' })));
    const subscriptionId = (await h.store.accounts.get(accountId))!.billing!.subscriptionId!;
    const pastDue = h.fake.updateSubscription(subscriptionId, { status: 'past_due' });
    const active = h.fake.updateSubscription(subscriptionId, { status: 'active' });
    // The newer first, then the older one, late: the state applied stays Stripe's latest.
    expect(await h.deliver([active, pastDue])).toEqual([200, 200]);
    expect((await h.store.accounts.get(accountId))!.billing?.status).toBe('active');
    await h.deliver([h.fake.updateSubscription(subscriptionId, { status: 'past_due' })]);
    const key = await h.services.keys.create(accountId, 'k');
    if (!key.ok) throw new Error('no key');
    // Stripe is still retrying the payment: the customer keeps being served.
    const served = await callTool(h.url, key.value.key, 'get_account', {});
    expect(served.status).toBe(200);
    expect((await h.store.accounts.get(accountId))!).toMatchObject({ planId: 'pro', status: 'active' });
    const deleted = h.fake.updateSubscription(subscriptionId, { status: 'canceled' });
    expect(deleted.type).toBe('customer.subscription.deleted');
    await h.deliver([deleted]);
    expect((await h.store.accounts.get(accountId))!).toMatchObject({
      planId: 'free',
      billing: { status: 'canceled' },
    });
    // An older "active" event arriving after the deletion changes nothing: Stripe says canceled.
    await h.deliver([active]);
    expect((await h.store.accounts.get(accountId))!.planId).toBe('free');
  });

  it('moves the plan when Stripe moves the price (the portal, or a subscription update)', async () => {
    await sellPlanAndPack(h);
    const accountId = await newAccount(h);
    await h.deliver(h.fake.completeCheckout(await checkoutFor(h, accountId, { plan: 'pro' })));
    // Subscribing to another plan while subscribed goes to Stripe; nothing changes here until its event.
    const change = await h.services.payments.checkout(
      accountId,
      { plan: 'team' },
      { success: 'x', cancel: 'y' },
    );
    expect(change).toEqual({ ok: true, value: { changed: 'team' } });
    expect((await h.store.accounts.get(accountId))!.planId).toBe('pro');
    expect(await h.deliver(h.fake.takeQueued())).toEqual([200]);
    expect((await h.store.accounts.get(accountId))!.planId).toBe('team');
  });

  it('takes a refunded pack back as far as the balance allows, once', async () => {
    await sellPlanAndPack(h);
    const accountId = await newAccount(h);
    const sessionId = await checkoutFor(h, accountId, { topup: 'small' });
    await h.deliver(h.fake.completeCheckout(sessionId));
    const charged = await h.services.tokens.apply(accountId, { kind: 'charge', amount: 200 });
    expect(charged.ok).toBe(true);
    const paymentIntent = await paymentIntentOf(h, sessionId);
    const refunded = h.fake.refund(paymentIntent);
    expect(await h.deliver([refunded, refunded])).toEqual([200, 200]);
    expect(await balanceAndLedger(h.store, accountId)).toEqual({ balance: 0, ledger: 0 });
    const taken = (await h.store.ledger.list(accountId, { limit: 10 })).find((e) => e.kind === 'adjust');
    expect(taken).toMatchObject({
      delta: -300,
      reason: `refund of pack small (PaymentIntent ${paymentIntent})`,
    });
  });

  it('keeps events of unknown customers and prices with no effect, and ignores other types', async () => {
    await sellPlanAndPack(h);
    const stranger = h.fake.event('customer.subscription.updated', {
      id: 'sub_unknown',
      object: 'subscription',
      customer: 'cus_nobody',
    });
    const other = h.fake.event('customer.created', { id: 'cus_x', object: 'customer' });
    expect(await h.deliver([stranger, other])).toEqual([200, 200]);
    const unmatched = await h.services.payments.unmatched();
    expect(unmatched.map((e) => [e.id, e.outcome])).toEqual(
      expect.arrayContaining([
        [other.id, 'ignored'],
        [stranger.id, 'no_effect'],
      ]),
    );
    // A price that is no plan's: kept on the account, plan unchanged.
    const accountId = await newAccount(h);
    const orphan = h.fake.addPrice({ type: 'recurring', unitAmount: 100, interval: 'month' });
    await h.deliver(h.fake.completeCheckout(await checkoutFor(h, accountId, { plan: 'pro' })));
    const subscriptionId = (await h.store.accounts.get(accountId))!.billing!.subscriptionId!;
    const moved = h.fake.updateSubscription(subscriptionId, { price: orphan.id });
    await h.deliver([moved]);
    expect((await h.store.accounts.get(accountId))!.planId).toBe('pro');
    const shown = await h.services.payments.show(accountId);
    expect(shown.ok && shown.value.events.find((e) => e.id === moved.id)).toMatchObject({
      outcome: 'unknown_price',
    });
  });

  it('answers 503 while Stripe cannot be read, applying nothing (Stripe retries)', async () => {
    await sellPlanAndPack(h);
    const accountId = await newAccount(h);
    const sessionId = await checkoutFor(h, accountId, { topup: 'small' });
    const [completed] = h.fake.completeCheckout(sessionId);
    const down = await h.fake.close().then(() => h.deliver([completed!]));
    expect(down).toEqual([503]);
    expect(await h.store.payments.seen(completed!.id)).toBe(false);
    expect((await h.store.accounts.get(accountId))!.tokenBalance).toBe(0);
  });
});

/** The PaymentIntent Stripe made for the session (read back as toolgate reads it). */
async function paymentIntentOf(h: PaidApp, sessionId: string): Promise<string> {
  const r = await fetch(`${h.fake.url}/v1/checkout/sessions/${sessionId}`, {
    headers: { authorization: `Bearer ${h.fake.secretKey}` },
  });
  return ((await r.json()) as { payment_intent: string }).payment_intent;
}
