/**
 * What a subscription's status does to its account, on both backends: unpaid falls back to the
 * fallback plan, or (TOOLGATE_STRIPE_UNPAID=suspend) suspends the account until Stripe says it is
 * paid again, firing toolgate's own account.status_changed as an operator's change would; an
 * account an operator suspended stays suspended whatever Stripe says.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BACKENDS, checkoutFor, newAccount, type PaidApp, paidApp, sellPlanAndPack } from './paid-app.js';

describe.each(BACKENDS)('a subscription status on %s', (backend) => {
  let h: PaidApp;
  afterEach(async () => {
    await h.close();
  });

  async function subscribed(unpaid: 'fallback' | 'suspend') {
    h = await paidApp(backend, { unpaid });
    await sellPlanAndPack(h);
    const accountId = await newAccount(h);
    await h.deliver(h.fake.completeCheckout(await checkoutFor(h, accountId, { plan: 'pro' })));
    const subscriptionId = (await h.store.accounts.get(accountId))!.billing!.subscriptionId!;
    return { accountId, subscriptionId };
  }

  it('unpaid moves the account to the fallback plan by default', async () => {
    const { accountId, subscriptionId } = await subscribed('fallback');
    await h.deliver([h.fake.updateSubscription(subscriptionId, { status: 'unpaid' })]);
    expect(await h.store.accounts.get(accountId)).toMatchObject({
      planId: 'free',
      status: 'active',
      billing: { status: 'unpaid' },
    });
  });

  it('unpaid suspends under suspend, fires account.status_changed, and paying again lifts it', async () => {
    const { accountId, subscriptionId } = await subscribed('suspend');
    await h.deliver([h.fake.updateSubscription(subscriptionId, { status: 'unpaid' })]);
    expect(await h.store.accounts.get(accountId)).toMatchObject({ planId: 'pro', status: 'suspended' });
    await h.deliver(h.fake.renewSubscription(subscriptionId));
    expect(await h.store.accounts.get(accountId)).toMatchObject({ planId: 'pro', status: 'active' });
    const changes = (await h.store.webhooks.events({ limit: 100 }))
      .filter((e) => e.type === 'account.status_changed' && e.accountId === accountId)
      .map((e) => e.data);
    expect(changes).toEqual([
      { account_id: accountId, status: 'suspended', previous_status: 'active' },
      { account_id: accountId, status: 'active', previous_status: 'suspended' },
    ]);
    const audit = (await h.store.audit.list({ limit: 100, accountId })).filter((a) => a.actor === 'stripe');
    expect(audit.map((a) => a.action)).toContain('account.update');
    expect(audit.every((a) => typeof a.details.event_id === 'string')).toBe(true);
  });

  it("does not lift an operator's suspension", async () => {
    const { accountId, subscriptionId } = await subscribed('suspend');
    await h.services.accounts.update(accountId, { status: 'suspended' });
    await h.deliver(h.fake.renewSubscription(subscriptionId));
    expect(await h.store.accounts.get(accountId)).toMatchObject({ status: 'suspended' });
  });
});
