/**
 * Operators' side of money: plan prices and packs checked against Stripe when set (recurring for a
 * plan, one-time for a pack, one price one plan or pack), the account's billing shown, synced from
 * Stripe and a portal URL made; through the admin API on both backends alike, and through the CLI
 * on the database and against a server.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { admin } from '../calls.js';
import { runCli } from '../cli/run-cli.js';
import { ADMIN_TOKEN } from '../helpers.js';
import { BACKENDS, checkoutFor, newAccount, type PaidApp, paidApp, sellPlanAndPack } from './paid-app.js';

const LIMITS = {
  enrich: { records: { '5h': 1, '1w': 2 }, requests: { '5h': 3 } },
  search: { records: { '5h': 4, '1w': 5 }, requests: { '5h': 6 } },
};

/** What a run answered, without what differs by backend or run (ids, times, request ids). */
const shape = (r: { statusCode: number; json(): any }) => {
  const body = r.json();
  return { status: r.statusCode, code: body.code ?? null, message: body.message ?? null };
};

describe.each(BACKENDS)('payments for operators on %s', (backend) => {
  let h: PaidApp;
  beforeEach(async () => {
    h = await paidApp(backend);
  });
  afterEach(async () => {
    await h.close();
  });

  it('checks a plan price and a pack price with Stripe, with a clear error for each mistake', async () => {
    const api = admin(h.app);
    const monthly = h.fake.addPrice({
      id: 'price_monthly',
      type: 'recurring',
      unitAmount: 900,
      interval: 'month',
    });
    const once = h.fake.addPrice({ id: 'price_once', type: 'one_time', unitAmount: 500 });
    const answers = [
      await api.put('/plans/pro', { limits: LIMITS, stripe_price: once.id }),
      await api.put('/plans/pro', { limits: LIMITS, stripe_price: 'price_missing' }),
      await api.put('/plans/pro', { limits: LIMITS, stripe_price: 'not a price' }),
      await api.put('/topups/small', { tokens: 500, stripe_price: monthly.id }),
      await api.put('/topups/small', { tokens: 0, stripe_price: once.id }),
    ].map(shape);
    expect(answers).toEqual([
      {
        status: 400,
        code: 'invalid_arguments',
        message:
          "Price price_once is one-time: a plan's price must be recurring (a monthly or yearly price in Stripe).",
      },
      { status: 400, code: 'invalid_arguments', message: 'Stripe has no price price_missing.' },
      {
        status: 400,
        code: 'invalid_arguments',
        message: 'stripe_price must be a Stripe price id, such as price_1PqRsT…',
      },
      {
        status: 400,
        code: 'invalid_arguments',
        message: "Price price_monthly is recurring: a pack's price must be one-time.",
      },
      expect.objectContaining({ status: 400, code: 'invalid_arguments' }),
    ]);
    const pro = await api.put('/plans/pro', {
      limits: LIMITS,
      stripe_price: monthly.id,
      period_tokens: 1000,
    });
    expect(pro.json()).toMatchObject({ id: 'pro', stripe_price: monthly.id, period_tokens: 1000 });
    expect(shape(await api.put('/plans/team', { limits: LIMITS, stripe_price: monthly.id }))).toEqual({
      status: 409,
      code: 'conflict',
      message: 'Price price_monthly already sells plan pro: one price, one plan or pack.',
    });
    expect((await api.put('/topups/small', { tokens: 500, stripe_price: once.id })).statusCode).toBe(200);
    expect((await api.get('/topups')).json().data).toMatchObject([
      { id: 'small', tokens: 500, stripe_price: once.id },
    ]);
    expect((await api.del('/topups/small')).statusCode).toBe(200);
    expect(shape(await api.del('/topups/small'))).toMatchObject({ status: 404, code: 'not_found' });
    const audit = (await api.get('/audit?limit=100')).json().data.map((e: { action: string }) => e.action);
    expect(audit).toEqual(expect.arrayContaining(['plan.put', 'topup.put', 'topup.remove']));
  });

  it("shows, syncs and opens the portal for an account's billing; another account's is its own", async () => {
    await sellPlanAndPack(h);
    const api = admin(h.app);
    const accountId = await newAccount(h);
    const stranger = await newAccount(h);
    expect(shape(await api.post(`/accounts/${stranger}/billing/portal`))).toMatchObject({
      status: 409,
      code: 'conflict',
    });
    const sessionId = await checkoutFor(h, accountId, { plan: 'pro' });
    // Only the checkout's completion reaches toolgate: sync reads the rest back from Stripe.
    const events = h.fake.completeCheckout(sessionId);
    const sync = await api.post(`/accounts/${accountId}/billing/sync`);
    expect(sync.json()).toMatchObject({ outcome: 'applied' });
    const shown = (await api.get(`/accounts/${accountId}/billing`)).json();
    expect(shown).toMatchObject({ account_id: accountId, subscription_status: 'active', events: [] });
    expect(shown.customer).toMatch(/^cus_/);
    const audit = (await api.get(`/audit?account_id=${accountId}&limit=100`)).json().data;
    expect(audit.find((e: { details: { sync?: boolean } }) => e.details.sync)).toMatchObject({
      actor: 'admin:admin',
      action: 'account.update',
    });
    await h.deliver(events);
    expect((await api.get(`/accounts/${accountId}/billing`)).json().events).toHaveLength(3);
    expect((await api.get(`/accounts/${stranger}/billing`)).json()).toMatchObject({
      customer: null,
      events: [],
    });
    // Over a socket: the portal returns to the address the operator reached.
    const portal = (await admin(h.url).post(`/accounts/${accountId}/billing/portal`)).json();
    expect(portal.url).toMatch(new RegExp(`^${h.fake.url}/portal/`));
    const made = h.fake.requests.find((r) => r.path === '/v1/billing_portal/sessions');
    expect(made?.body).toMatchObject({
      customer: shown.customer,
      return_url: `${h.url}/console/a/${accountId}/billing`,
    });
    expect(shape(await api.get('/accounts/acc_nope/billing'))).toMatchObject({
      status: 404,
      code: 'not_found',
    });
    expect((await api.get('/billing/unmatched')).json().data).toEqual([]);
  });
});

describe('payments in the CLI', () => {
  let h: PaidApp;
  beforeEach(async () => {
    h = await paidApp('SQLite');
  });
  afterEach(async () => {
    await h.close();
  });

  it('sets prices and packs, and shows billing, through a server (--url) as on the database', async () => {
    const monthly = h.fake.addPrice({
      id: 'price_cli_month',
      type: 'recurring',
      unitAmount: 900,
      interval: 'month',
    });
    const once = h.fake.addPrice({ id: 'price_cli_once', type: 'one_time', unitAmount: 500 });
    const env = { PATH: process.env.PATH ?? '', TOOLGATE_ADMIN_TOKEN: ADMIN_TOKEN };
    const cli = (...args: string[]) => runCli(env, [...args, '--url', h.url]);
    const set = await cli('plans', 'set', 'free', '--stripe-price', monthly.id, '--period-tokens', '100');
    expect(set.stdout).toContain(`Sold at Stripe price ${monthly.id}, granting 100 tokens per paid period.`);
    const refused = await cli('topups', 'set', 'small', '--tokens', '500', '--stripe-price', monthly.id);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("Price price_cli_month is recurring: a pack's price must be one-time.");
    expect((await cli('topups', 'set', 'small', '--tokens', '500', '--stripe-price', once.id)).stdout).toBe(
      `Saved pack small: 500 tokens at Stripe price ${once.id}.\n`,
    );
    expect((await cli('topups', 'list')).stdout).toMatch(/small\s+500\s+price_cli_once/);
    const accountId = await newAccount(h);
    const shown = await cli('billing', 'show', accountId);
    expect(shown.stdout).toContain('No Stripe events for this account yet.');
    const portal = await cli('billing', 'portal', accountId);
    expect(portal.code).toBe(1);
    expect(portal.stderr).toContain('has no Stripe customer yet');
    expect((await cli('topups', 'remove', 'small')).stdout).toBe('Removed pack small.\n');
  });
});
