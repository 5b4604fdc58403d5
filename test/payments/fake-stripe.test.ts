/** @module The fake Stripe's self-test, through the official `stripe` library as toolgate uses it: what the library parses and types comes back, its errors are the library's classes, and its signatures pass the library's own check. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readBody } from '../upstream/test-upstream.js';
import { type FakeStripe, startFakeStripe } from './fake-stripe.js';
import { parseForm } from './fake-stripe-account.js';
import { addInterval } from './fake-stripe-objects.js';

let fake: FakeStripe;
let stripe: Stripe;

const clientFor = (key: string) =>
  new Stripe(key, {
    host: '127.0.0.1',
    port: Number(new URL(fake.url).port),
    protocol: 'http',
    maxNetworkRetries: 0,
  });

beforeEach(async () => {
  fake = await startFakeStripe();
  stripe = clientFor(fake.secretKey);
});
afterEach(() => fake.close());

async function subscribeSession(priceId: string, customer: string) {
  return stripe.checkout.sessions.create({
    mode: 'subscription',
    customer,
    client_reference_id: 'acc_1',
    line_items: [{ price: priceId, quantity: 1 }],
    success_url: 'http://app.test/billing?session={CHECKOUT_SESSION_ID}',
    cancel_url: 'http://app.test/billing',
    metadata: { account_id: 'acc_1' },
    subscription_data: { metadata: { account_id: 'acc_1' } },
  });
}

describe('fake Stripe through the official library', () => {
  it('sells a subscription through Checkout, in the shapes of API version 2026-10-28', async () => {
    const price = fake.addPrice({ type: 'recurring', unitAmount: 1500, interval: 'month', nickname: 'Pro' });
    expect((await stripe.prices.retrieve(price.id)).recurring).toMatchObject({
      interval: 'month',
      usage_type: 'licensed',
    });
    const customer = await stripe.customers.create({ name: 'Ada', metadata: { account_id: 'acc_1' } });
    expect(customer).toMatchObject({ object: 'customer', name: 'Ada', metadata: { account_id: 'acc_1' } });
    const session = await subscribeSession(price.id, customer.id);
    expect(session).toMatchObject({
      status: 'open',
      payment_status: 'unpaid',
      subscription: null,
      customer: customer.id,
    });
    expect(session.url).toBe(`${fake.url}/pay/${session.id}`);
    expect(fake.requests.find((r) => r.path === '/v1/checkout/sessions')?.body).toMatchObject({
      line_items: [{ price: price.id, quantity: '1' }],
      metadata: { account_id: 'acc_1' },
    });

    const events = fake.completeCheckout(session.id);
    expect(events.map((e) => e.type)).toEqual([
      'checkout.session.completed',
      'customer.subscription.created',
      'invoice.paid',
    ]);
    const subId = events[1]!.data.object.id as string;
    expect(events[2]!.data.object.parent.subscription_details.subscription).toBe(subId);

    const sub = await stripe.subscriptions.retrieve(subId);
    const item = sub.items.data[0]!;
    expect(sub).toMatchObject({ status: 'active', customer: customer.id, metadata: { account_id: 'acc_1' } });
    expect(sub.latest_invoice).toBe(events[2]!.data.object.id);
    expect(item.price.id).toBe(price.id);
    const days = (item.current_period_end - item.current_period_start) / 86_400;
    expect(days).toBeGreaterThanOrEqual(28);
    expect(days).toBeLessThanOrEqual(31);

    const read = await stripe.checkout.sessions.retrieve(session.id, { expand: ['line_items'] });
    expect(read).toMatchObject({
      status: 'complete',
      payment_status: 'paid',
      subscription: subId,
      url: null,
    });
    const line = read.line_items!.data[0]!;
    expect(line.price?.id).toBe(price.id);
    expect(line.quantity).toBe(1);
    expect(fake.requests.at(-1)).toMatchObject({ method: 'GET', body: { expand: ['line_items'] } });
    const listed = await stripe.subscriptions.list({ customer: customer.id, status: 'all', limit: 10 });
    expect(listed.data.map((s) => s.id)).toEqual([subId]);
  });

  it('changes, renews and cancels a subscription, queueing what the API did', async () => {
    const basic = fake.addPrice({ type: 'recurring', unitAmount: 500 });
    const pro = fake.addPrice({ type: 'recurring', unitAmount: 1500, interval: 'year' });
    const customer = await stripe.customers.create({ name: 'Ada' });
    const subId = fake.completeCheckout((await subscribeSession(basic.id, customer.id)).id)[1]!.data.object
      .id;
    const sub = await stripe.subscriptions.retrieve(subId);
    await stripe.subscriptions.update(subId, {
      items: [{ id: sub.items.data[0]!.id, price: pro.id }],
      proration_behavior: 'create_prorations',
    });
    const [updated] = fake.takeQueued();
    expect(updated).toMatchObject({
      type: 'customer.subscription.updated',
      data: { object: { status: 'active' } },
    });
    expect(updated!.data.object.items.data[0].price.id).toBe(pro.id);
    expect(updated!.request.idempotency_key).toMatch(/^stripe-node-retry-/);
    expect(fake.takeQueued()).toEqual([]);

    expect(fake.updateSubscription(subId, { status: 'past_due' }).data.previous_attributes).toEqual({
      status: 'active',
    });
    const [renewed, paid] = fake.renewSubscription(subId);
    expect(renewed!.data.object.status).toBe('active');
    expect(renewed!.data.object.items.data[0].current_period_start).toBe(
      sub.items.data[0]!.current_period_end,
    );
    expect(paid).toMatchObject({
      type: 'invoice.paid',
      data: { object: { billing_reason: 'subscription_cycle' } },
    });

    expect((await stripe.subscriptions.cancel(subId)).status).toBe('canceled');
    expect(fake.takeQueued().map((e) => e.type)).toEqual(['customer.subscription.deleted']);
    expect((await stripe.subscriptions.list({ customer: customer.id })).data).toEqual([]);
  });

  it('takes a one-time payment, paid at once or later, and refunds it', async () => {
    const pack = fake.addPrice({ type: 'one_time', unitAmount: 900 });
    const customer = await stripe.customers.create({ name: 'Ada' });
    const create = () =>
      stripe.checkout.sessions.create({
        mode: 'payment',
        customer: customer.id,
        line_items: [{ price: pack.id, quantity: 2 }],
        success_url: 'http://app.test/ok',
        payment_intent_data: { metadata: { account_id: 'acc_1' } },
      });
    const [completed] = fake.completeCheckout((await create()).id);
    expect(completed!.data.object).toMatchObject({ payment_status: 'paid', amount_total: 1800 });
    const intent = await stripe.paymentIntents.retrieve(completed!.data.object.payment_intent);
    expect(intent).toMatchObject({ status: 'succeeded', amount: 1800, metadata: { account_id: 'acc_1' } });

    const later = fake.completeCheckout((await create()).id, { async: true });
    expect(later.map((e) => [e.type, e.data.object.payment_status])).toEqual([
      ['checkout.session.completed', 'unpaid'],
      ['checkout.session.async_payment_succeeded', 'paid'],
    ]);

    const partial = fake.refund(intent.id, 800);
    expect(partial.data.object).toMatchObject({
      payment_intent: intent.id,
      amount: 1800,
      amount_refunded: 800,
      refunded: false,
    });
    expect(fake.refund(intent.id).data.object).toMatchObject({ amount_refunded: 1800, refunded: true });
  });

  it('signs events the library verifies, and only with its secret', () => {
    const event = fake.event('invoice.paid', { id: 'in_1', object: 'invoice' });
    const payload = JSON.stringify(event);
    const verified = stripe.webhooks.constructEvent(payload, fake.sign(payload), fake.webhookSecret);
    expect(verified).toMatchObject({ id: event.id, type: 'invoice.paid', api_version: Stripe.API_VERSION });
    expect(() =>
      stripe.webhooks.constructEvent(
        payload,
        fake.sign(payload, { secret: 'whsec_other' }),
        fake.webhookSecret,
      ),
    ).toThrow(Stripe.errors.StripeSignatureVerificationError);
    const old = fake.sign(payload, { timestamp: Math.floor(Date.now() / 1000) - 3600 });
    expect(() => stripe.webhooks.constructEvent(payload, old, fake.webhookSecret)).toThrow(/tolerance/);
  });

  it('refuses as Stripe does: a wrong key, an unknown id, a mismatched price, a reused key', async () => {
    const wrong = clientFor('sk_test_not_the_key_1234');
    const denied = await wrong.customers.create({ name: 'x' }).catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    expect(denied).toMatchObject({
      statusCode: 401,
      message: expect.stringMatching(/^Invalid API Key provided: sk_test_\*+1234$/),
    });

    const missing = await stripe.prices.retrieve('price_nope').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(missing).toMatchObject({
      statusCode: 404,
      code: 'resource_missing',
      param: 'id',
      message: "No such price: 'price_nope'",
    });

    const pack = fake.addPrice({ type: 'one_time', unitAmount: 900 });
    const customer = await stripe.customers.create({ name: 'Ada' });
    const mismatched = await subscribeSession(pack.id, customer.id).catch((e: unknown) => e);
    expect(mismatched).toMatchObject({ type: 'StripeInvalidRequestError', statusCode: 400 });
    const noCustomer = await subscribeSession(pack.id, 'cus_nope').catch((e: unknown) => e);
    expect(noCustomer).toMatchObject({ statusCode: 400, code: 'resource_missing', param: 'customer' });

    const first = await stripe.customers.create(
      { name: 'Bo' },
      { idempotencyKey: 'toolgate-customer-acc_2' },
    );
    const again = await stripe.customers.create(
      { name: 'Bo' },
      { idempotencyKey: 'toolgate-customer-acc_2' },
    );
    expect(again.id).toBe(first.id);
    expect(fake.requests.filter((r) => r.idempotencyKey === 'toolgate-customer-acc_2')).toHaveLength(2);
    const reused = await stripe.customers
      .create({ name: 'Cy' }, { idempotencyKey: 'toolgate-customer-acc_2' })
      .catch((e: unknown) => e);
    expect(reused).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
  });

  it('holds answers until released, the work already done', async () => {
    const arrived = fake.hold('/v1/customers');
    const pending = stripe.customers.create({ name: 'Ada' }, { idempotencyKey: 'held-1' });
    await arrived;
    const settled = await Promise.race([
      pending.then(() => 'answered'),
      new Promise((r) => setTimeout(r, 100, 'held')),
    ]);
    expect(settled).toBe('held');
    fake.release();
    const customer = await pending;
    expect((await stripe.customers.retrieve(customer.id)).id).toBe(customer.id);
  });

  it('serves the hosted pages: pay delivers the events signed, in order, then goes to success_url', async () => {
    const received: { type: string; verified: boolean }[] = [];
    const hook = createServer(async (req, res) => {
      const body = await readBody(req);
      const event = stripe.webhooks.constructEvent(
        body,
        req.headers['stripe-signature'] as string,
        fake.webhookSecret,
      );
      received.push({ type: event.type, verified: true });
      res.writeHead(200).end('{}');
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    fake.setWebhookUrl(`http://127.0.0.1:${(hook.address() as AddressInfo).port}/webhooks/stripe`);
    const price = fake.addPrice({ type: 'recurring', unitAmount: 1500, nickname: 'Pro' });
    const customer = await stripe.customers.create({ name: 'Ada' });
    const session = await subscribeSession(price.id, customer.id);

    const page = await (await fetch(session.url!)).text();
    expect(page).toContain('<button type="submit">Pay</button>');
    expect(page).toContain('1 × Pro: 15.00 USD / month');
    expect(page).toContain('href="http://app.test/billing"');
    const paid = await fetch(session.url!, { method: 'POST', redirect: 'manual' });
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toBe(`http://app.test/billing?session=${session.id}`);
    expect(received.map((r) => r.type)).toEqual([
      'checkout.session.completed',
      'customer.subscription.created',
      'invoice.paid',
    ]);
    await new Promise<void>((resolve) => hook.close(() => resolve()));

    const portal = await stripe.billingPortal.sessions.create({
      customer: customer.id,
      return_url: 'http://app.test/billing',
    });
    expect(portal).toMatchObject({
      object: 'billing_portal.session',
      url: `${fake.url}/portal/${portal.id}`,
    });
    const portalPage = await (await fetch(portal.url)).text();
    expect(portalPage).toContain('<title>Billing portal</title>');
    expect(portalPage).toContain('<a href="http://app.test/billing">Return to http://app.test/billing</a>');
  });

  it('parses bracket notation into objects and arrays', () => {
    expect(
      parseForm(
        'line_items[0][price]=price_x&line_items[0][quantity]=1&metadata[account_id]=acc_1&expand[0]=line_items&expand[]=customer&q=a+b%26c',
      ),
    ).toEqual({
      line_items: [{ price: 'price_x', quantity: '1' }],
      metadata: { account_id: 'acc_1' },
      expand: ['line_items', 'customer'],
      q: 'a b&c',
    });
    expect(parseForm('__proto__[x]=1&a[constructor]=2')).toEqual({});
  });

  it('bills by the calendar, as Stripe does: a month from Jan 31 ends on the last of February', () => {
    const at = (iso: string) => Date.parse(iso) / 1000;
    expect(addInterval(at('2026-01-31T10:00:00Z'), 'month', 1)).toBe(at('2026-02-28T10:00:00Z'));
    expect(addInterval(at('2024-02-29T10:00:00Z'), 'year', 1)).toBe(at('2025-02-28T10:00:00Z'));
    expect(addInterval(at('2026-12-15T10:00:00Z'), 'month', 1)).toBe(at('2027-01-15T10:00:00Z'));
  });
});
