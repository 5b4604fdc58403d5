/**
 * The operators' usage history, `GET /admin/v1/accounts/{id}/usage/history`: dense days, every key
 * of the account in one answer, by tool, the default range on the harness's clock, the range and
 * grouping refused as the service rules, and only the admin token opens it. Plans as monthly
 * subscriptions through `PUT /admin/v1/plans/{id}`.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { UsageRow } from '../../src/domain/usage-history.js';
import { callTool, send } from '../calls.js';
import { type AppHarness, accountWithKey, scratchApp } from '../helpers.js';
import { admin } from './admin.test-helpers.js';

const zero = { calls: 0, tokens: 0, records: 0, with_data: 0, without_data: 0, failed: 0 };

/** A stored rollup row: one call's worth unless told. */
const row = (r: Partial<UsageRow> & Pick<UsageRow, 'accountId' | 'day' | 'keyId' | 'tool'>): UsageRow => ({
  surface: 'http',
  calls: 1,
  tokens: 0,
  records: 0,
  withData: 0,
  withoutData: 1,
  failed: 0,
  ...r,
});

describe('admin usage history', () => {
  let h: AppHarness;
  let api: ReturnType<typeof admin>;
  let accountId: string;
  let keyA: string;
  let keyB: string;
  let otherAccount: string;
  beforeEach(async () => {
    h = await scratchApp();
    api = admin(h);
    const a = await accountWithKey(h.services, { tokens: 100 });
    accountId = a.accountId;
    keyA = a.keyId;
    const second = await h.services.keys.create(accountId, 'second');
    if (!second.ok) throw new Error(second.error.message);
    keyB = second.value.id;
    otherAccount = (await accountWithKey(h.services, { name: 'Other' })).accountId;
    await h.store.usageHistory.add([
      row({ accountId, day: '2026-04-10', keyId: keyA, tool: 'lookup', calls: 3, tokens: 9, withoutData: 3 }),
      row({
        accountId,
        day: '2026-04-10',
        keyId: keyB,
        tool: 'find_people',
        surface: 'mcp',
        calls: 2,
        tokens: 10,
        records: 4,
        withData: 2,
        withoutData: 0,
      }),
      row({ accountId, day: '2026-04-12', keyId: keyB, tool: 'lookup', calls: 1, withoutData: 0, failed: 1 }),
      // Another account's calls, and a day outside the ranges asked for: never counted here.
      row({ accountId: otherAccount, day: '2026-04-10', keyId: 'key_other', tool: 'lookup', calls: 50 }),
      row({ accountId, day: '2026-03-01', keyId: keyA, tool: 'lookup', calls: 7 }),
    ]);
  });
  afterEach(async () => h.close());

  const history = (query: string) => api.get(`/accounts/${accountId}/usage/history${query}`);
  const expectError = (res: Awaited<ReturnType<typeof api.get>>, status: number, code: string) => {
    expect(res.statusCode).toBe(status);
    expect(res.json()).toMatchObject({ status: 'error', code });
    return res.json() as { message: string };
  };

  it('by day: every day of the range, days without calls as zeros, and the totals', async () => {
    const res = await history('?from=2026-04-09&to=2026-04-13&by=day');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      account_id: accountId,
      from: '2026-04-09',
      to: '2026-04-13',
      by: 'day',
      rows: [
        { day: '2026-04-09', ...zero },
        { day: '2026-04-10', calls: 5, tokens: 19, records: 4, with_data: 2, without_data: 3, failed: 0 },
        { day: '2026-04-11', ...zero },
        { day: '2026-04-12', ...zero, calls: 1, failed: 1 },
        { day: '2026-04-13', ...zero },
      ],
      totals: { calls: 6, tokens: 19, records: 4, with_data: 2, without_data: 3, failed: 1 },
    });
  });

  it('by key: every key of the account in one answer', async () => {
    const body = (await history('?from=2026-04-01&to=2026-04-15&by=key')).json();
    expect(body.by).toBe('key');
    expect(body.rows).toEqual(
      [
        { key_id: keyA, calls: 3, tokens: 9, records: 0, with_data: 0, without_data: 3, failed: 0 },
        { key_id: keyB, calls: 3, tokens: 10, records: 4, with_data: 2, without_data: 0, failed: 1 },
      ].sort((x, y) => (x.key_id < y.key_id ? -1 : 1)),
    );
    expect(body.totals.calls).toBe(6);
  });

  it('by tool, over both surfaces', async () => {
    const body = (await history('?from=2026-04-01&to=2026-04-15&by=tool')).json();
    expect(body.rows).toEqual([
      { tool: 'find_people', calls: 2, tokens: 10, records: 4, with_data: 2, without_data: 0, failed: 0 },
      { tool: 'lookup', calls: 4, tokens: 9, records: 0, with_data: 0, without_data: 3, failed: 1 },
    ]);
  });

  it('defaults: by day over the 30 UTC days ending today (2026-04-15 on the harness clock)', async () => {
    const res = await history('');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ from: '2026-03-17', to: '2026-04-15', by: 'day' });
    expect(body.rows).toHaveLength(30);
    expect(body.rows[0].day).toBe('2026-03-17');
    expect(body.rows.at(-1).day).toBe('2026-04-15');
    // The 2026-03-01 row is before the default range.
    expect(body.totals.calls).toBe(6);
    // Only `to` given: the 30 days ending there.
    expect((await history('?to=2026-03-01')).json()).toMatchObject({ from: '2026-01-31', to: '2026-03-01' });
  });

  it('counts real calls, written by the counters, with the stored rows', async () => {
    const { accountId: fresh, key, keyId } = await accountWithKey(h.services, { name: 'Live' });
    for (let i = 0; i < 2; i++) {
      const res = await callTool(h.app, key, 'get_account', {});
      expect(res.statusCode).toBe(200);
    }
    await h.usageCounters.flush();
    const body = (await api.get(`/accounts/${fresh}/usage/history?by=key&from=2026-04-15`)).json();
    expect(body.rows).toEqual([{ key_id: keyId, ...zero, calls: 2, without_data: 2 }]);
    const byTool = (await api.get(`/accounts/${fresh}/usage/history?by=tool&from=2026-04-15`)).json();
    expect(byTool.rows.map((r: { tool: string; calls: number }) => [r.tool, r.calls])).toEqual([
      ['get_account', 2],
    ]);
  });

  it('refuses a bad range or grouping with 400 invalid_arguments', async () => {
    expect(
      expectError(await history('?from=2026-04-10&to=2026-04-09'), 400, 'invalid_arguments').message,
    ).toBe('from must not be after to.');
    expect(expectError(await history('?from=2026-02-30'), 400, 'invalid_arguments').message).toMatch(/^from/);
    expect(expectError(await history('?to=2026-13-01'), 400, 'invalid_arguments').message).toMatch(/^to/);
    expectError(await history('?from=20260401'), 400, 'invalid_arguments');
    expectError(await history('?from='), 400, 'invalid_arguments');
    expect(
      expectError(await history('?from=2025-01-01&to=2026-04-15'), 400, 'invalid_arguments').message,
    ).toMatch(/400 days/);
    // 400 days exactly is allowed.
    const longest = await history('?from=2025-03-12&to=2026-04-15');
    expect(longest.statusCode).toBe(200);
    expect(longest.json().rows).toHaveLength(400);
    expect(expectError(await history('?by=week'), 400, 'invalid_arguments').message).toBe(
      'by must be day, key or tool.',
    );
    expectError(await history('?by=day&color=red'), 400, 'invalid_arguments');
    expectError(await history(`?from=${'9'.repeat(30)}`), 400, 'invalid_arguments');
  });

  it('answers 404 not_found for an unknown account', async () => {
    expectError(await api.get('/accounts/acc_nope/usage/history'), 404, 'not_found');
  });

  it('is closed to API keys and to no token at all', async () => {
    const { key } = await accountWithKey(h.services, { name: 'Keyed' });
    const withKey = await admin(h.app, key).get(`/accounts/${accountId}/usage/history`);
    expectError(withKey, 401, 'invalid_admin_token');
    const none = await send(h.app, null, 'GET', `/admin/v1/accounts/${accountId}/usage/history`);
    expectError(none, 401, 'invalid_admin_token');
  });
});

describe('admin plans as subscriptions', () => {
  let h: AppHarness;
  let api: ReturnType<typeof admin>;
  beforeEach(async () => {
    h = await scratchApp();
    api = admin(h);
  });
  afterEach(async () => h.close());

  const limits = {
    enrich: { records: { '5h': 1, '1w': 2 }, requests: { '5h': 3 } },
    search: { records: { '5h': 4, '1w': 5 }, requests: { '5h': 6 } },
  };
  const plan = async (id: string) =>
    (await api.get('/plans')).json().data.find((p: { id: string }) => p.id === id);

  it('lists every plan with its subscription, null for none', async () => {
    const data = (await api.get('/plans')).json().data;
    expect(data.map((p: { id: string; subscription: unknown }) => [p.id, p.subscription])).toEqual([
      ['free', null],
      ['subscription_27', 'monthly'],
      ['subscription_97', 'monthly'],
    ]);
  });

  it('PUT sets a monthly subscription, null takes it away, and leaving it out is none', async () => {
    const monthly = await api.put('/plans/tiny', { limits, subscription: 'monthly' });
    expect(monthly.statusCode).toBe(200);
    expect(monthly.json()).toEqual({
      id: 'tiny',
      unlimited: false,
      limits,
      subscription: 'monthly',
      stripe_price: null,
      period_tokens: null,
      name: null,
      description: null,
    });
    expect((await plan('tiny')).subscription).toBe('monthly');

    const none = await api.put('/plans/tiny', { limits, subscription: null });
    expect(none.json()).toEqual({
      id: 'tiny',
      unlimited: false,
      limits,
      subscription: null,
      stripe_price: null,
      period_tokens: null,
      name: null,
      description: null,
    });
    expect((await plan('tiny')).subscription).toBeNull();

    await api.put('/plans/tiny', { limits, subscription: 'monthly' });
    expect((await api.put('/plans/tiny', { limits })).json().subscription).toBeNull();

    // The audit trail says what the plan became, subscription included.
    const trail = (await api.get('/audit?limit=100'))
      .json()
      .data.filter((e: { action: string }) => e.action === 'plan.put');
    expect(trail.map((e: { details: { subscription: unknown } }) => e.details.subscription)).toEqual([
      'monthly',
      null,
      'monthly',
      null,
    ]);
  });

  it('a monthly plan bills its accounts by the month', async () => {
    await api.put('/plans/tiny', { limits, subscription: 'monthly' });
    const { key } = await accountWithKey(h.services, { plan: 'tiny' });
    const res = await callTool(h.app, key, 'get_billing', {});
    expect(res.json().results).toMatchObject({
      plan: 'tiny',
      subscription_status: 'active',
      current_period_start: '2026-04-15T13:55:29Z',
      current_period_end: '2026-05-15T13:55:29Z',
    });
  });

  it('refuses any other subscription with 400 invalid_arguments, and saves nothing', async () => {
    for (const subscription of ['yearly', 'Monthly', '', true, 1, {}]) {
      const res = await api.put('/plans/tiny', { limits, subscription });
      expect(res.statusCode, JSON.stringify(subscription)).toBe(400);
      expect(res.json()).toMatchObject({ status: 'error', code: 'invalid_arguments' });
    }
    expect(await plan('tiny')).toBeUndefined();
  });

  it('the service refuses the same, for callers that skip the schema', async () => {
    const r = await h.services.plans.put('tiny', { limits, subscription: 'weekly' });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatchObject({ code: 'invalid_arguments' });
    // The CLI form too: a value commander might hand over ('' for a parser's null) never reaches the store.
    const set = await h.services.plans.set('free', [], { subscription: '' as never });
    expect(set.ok).toBe(false);
    if (!set.ok) expect(set.error).toMatchObject({ code: 'invalid_arguments' });
  });
});
