/**
 * The console's Billing page with payments on, on both backends, over HTTP with a cookie jar: what
 * owners and members see, each button's 303 to Stripe's page, and its abuse cases (no CSRF token,
 * a member, another account's id, an unknown plan or pack, hostile return parameters, a closed
 * account).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/domain/clock.js';
import { StripeGateway } from '../../src/payments/stripe-gateway.js';
import { type Backend, type ConsoleApp, consoleApp } from '../console/console-app-helpers.js';
import { formWithButton, pageText } from '../console/console-client-helpers.js';
import { type World, world } from '../console/security-helpers.js';
import { postgresAvailable } from '../postgres.js';
import { type FakeStripe, startFakeStripe } from './fake-stripe.js';

const backends: Backend[] = ['sqlite', ...((await postgresAvailable()) ? (['postgres'] as const) : [])];

describe.each(backends)("the Billing page's buttons on %s", (backend) => {
  let fake: FakeStripe;
  let h: ConsoleApp;
  let w: World;
  beforeEach(async () => {
    fake = await startFakeStripe();
    const provider = new StripeGateway(
      { secretKey: fake.secretKey, webhookSecret: fake.webhookSecret, apiUrl: fake.url },
      systemClock,
    );
    h = await consoleApp(backend, { payments: { provider, fallbackPlan: 'free', unpaid: 'fallback' } });
    const monthly = fake.addPrice({ type: 'recurring', unitAmount: 1900, interval: 'month' });
    const once = fake.addPrice({ type: 'one_time', unitAmount: 500 });
    const free = (await h.store.plans.get('free'))!;
    expect((await h.services.plans.put('pro', { limits: free.limits, stripe_price: monthly.id })).ok).toBe(
      true,
    );
    expect((await h.services.payments.setTopup('small', { tokens: 500, stripe_price: once.id })).ok).toBe(
      true,
    );
    w = await world(h);
  });
  afterEach(async () => {
    await h.close();
    await fake.close();
  });

  const billing = (accountId: string, query = '') => `/console/a/${accountId}/billing${query}`;

  it('offers owners plans and packs at their Stripe prices, each button a 303 to Stripe', async () => {
    const owner = await w.signIn(w.a.owner);
    const page = await owner.get(billing(w.a.accountId));
    const text = pageText(page.body);
    expect(text).toContain('$19.00 / month');
    expect(text).toContain('$5.00');
    expect(text).not.toContain('Manage billing');
    // The forms' redirects lead to Stripe's pages: the CSP lets them.
    expect(page.headers.get('content-security-policy')).toContain(`form-action 'self' ${fake.url}`);
    const buy = await owner.submit(formWithButton(page, 'Buy small'), {}, { follow: false });
    expect(buy.status).toBe(303);
    expect(buy.headers.get('location')).toMatch(new RegExp(`^${fake.url}/pay/cs_`));
    const session = fake.requests.find((r) => r.method === 'POST' && r.path === '/v1/checkout/sessions');
    expect(session?.body).toMatchObject({
      mode: 'payment',
      client_reference_id: w.a.accountId,
      line_items: [{ quantity: '1' }],
      success_url: `${h.url}${billing(w.a.accountId)}?checkout=success`,
    });
    const subscribe = await owner.submit(formWithButton(page, 'Subscribe to pro'), {}, { follow: false });
    expect(subscribe.status).toBe(303);
    // One customer, made once, for both sessions.
    expect(fake.requests.filter((r) => r.path === '/v1/customers')).toHaveLength(1);
    const again = await owner.get(billing(w.a.accountId));
    const portal = await owner.submit(formWithButton(again, 'Manage billing'), {}, { follow: false });
    expect(portal.status).toBe(303);
    expect(portal.headers.get('location')).toMatch(new RegExp(`^${fake.url}/portal/`));
  });

  it('refuses a missing CSRF token, members, another account, unknown offers; shows only its own notices', async () => {
    const owner = await w.signIn(w.a.owner);
    const page = await owner.get(billing(w.a.accountId));
    const form = formWithButton(page, 'Buy small');
    expect((await owner.post(form.action, {}, { follow: false })).status).toBe(403);
    const csrf = { _csrf: form.fields._csrf ?? '' };
    expect((await owner.post(`${billing(w.b.accountId)}/buy/small`, csrf, { follow: false })).status).toBe(
      404,
    );
    expect((await owner.post(`${billing(w.a.accountId)}/buy/nope`, csrf, { follow: false })).status).toBe(
      404,
    );
    expect(
      (await owner.post(`${billing(w.a.accountId)}/subscribe/nope`, csrf, { follow: false })).status,
    ).toBe(404);
    expect((await owner.post(`${billing(w.a.accountId)}/portal`, csrf, { follow: false })).status).toBe(409);
    const member = await w.signIn(w.a.member);
    const seen = await member.get(billing(w.a.accountId));
    expect(pageText(seen.body)).toContain(
      "Only the account's owners can subscribe, buy tokens and manage billing.",
    );
    expect(() => formWithButton(seen, 'Buy small')).toThrow();
    const memberCsrf = /name="_csrf" value="([^"]+)"/.exec(seen.body)?.[1] ?? '';
    // A member is told the action is for the account's owners.
    expect(
      (await member.post(`${billing(w.a.accountId)}/buy/small`, { _csrf: memberCsrf }, { follow: false }))
        .status,
    ).toBe(403);
    expect(fake.requests.filter((r) => r.path === '/v1/checkout/sessions')).toHaveLength(0);
    const thanks = await owner.get(billing(w.a.accountId, '?checkout=success'));
    expect(pageText(thanks.body)).toContain('Thank you: the payment went through.');
    const hostile = await owner.get(
      billing(w.a.accountId, '?checkout=<script>&changed=%3Cscript%3Ealert(1)'),
    );
    expect(hostile.status).toBe(200);
    expect(hostile.body).not.toContain('<script>');
    expect(pageText(hostile.body)).not.toMatch(/Thank you|was sent to Stripe/);
  });

  it('refuses to sell to a closed account', async () => {
    const owner = await w.signIn(w.a.owner);
    const page = await owner.get(billing(w.a.accountId));
    await h.services.accounts.update(w.a.accountId, { status: 'closed' });
    const refused = await owner.submit(formWithButton(page, 'Buy small'), {}, { follow: false });
    expect(refused.status).toBe(409);
    expect(pageText(refused.body)).toContain('The account is closed.');
    expect(fake.requests.filter((r) => r.path === '/v1/checkout/sessions')).toHaveLength(0);
  });
});
