import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type AppHarness, scratchApp } from '../helpers.js';
import { admin } from './admin.test-helpers.js';

describe('admin API, happy paths', () => {
  let h: AppHarness;
  let api: ReturnType<typeof admin>;
  beforeEach(async () => {
    h = await scratchApp();
    api = admin(h);
  });
  afterEach(async () => h.close());

  const createAccount = async (body: Record<string, unknown> = { name: 'Acme' }) => {
    const res = await api.post('/accounts', body);
    expect(res.statusCode).toBe(201);
    return res.json();
  };

  it('creates an account (201) with plan, unlimited override and opening tokens, and reads it back', async () => {
    const created = await createAccount({ name: 'Acme', plan: 'subscription_27', tokens: 500 });
    expect(created).toMatchObject({
      id: expect.stringMatching(/^acc_/),
      name: 'Acme',
      status: 'active',
      plan: 'subscription_27',
      token_balance: 500,
      unlimited: false,
      unlimited_override: null,
      api_key_count: 0,
      user_count: 0,
      created_at: '2026-04-15T13:55:29Z',
    });
    expect((await api.get(`/accounts/${created.id}`)).json()).toEqual(created);
    const unlimited = await createAccount({ name: 'Big', unlimited: true });
    expect(unlimited).toMatchObject({
      plan: 'free',
      unlimited: true,
      token_balance: -1,
      unlimited_override: true,
    });
  });

  it('lists accounts in creation order, a page at a time', async () => {
    const ids: string[] = [];
    for (const name of ['a', 'b', 'c']) {
      ids.push((await createAccount({ name })).id);
      h.clock.advance(1);
    }
    const all = (await api.get('/accounts')).json().data.map((a: { id: string }) => a.id);
    expect(all).toEqual(ids);
    const page = (await api.get(`/accounts?limit=1&after=${ids[0]}`)).json().data;
    expect(page.map((a: { id: string }) => a.id)).toEqual([ids[1]]);
  });

  it('updates name, plan, status and the unlimited override; null follows the plan again', async () => {
    const { id } = await createAccount();
    h.clock.advance(60);
    const updated = (
      await api.patch(`/accounts/${id}`, { name: 'Acme Ltd', plan: 'subscription_97', status: 'suspended' })
    ).json();
    expect(updated).toMatchObject({
      name: 'Acme Ltd',
      plan: 'subscription_97',
      status: 'suspended',
      unlimited: true,
      updated_at: '2026-04-15T13:56:29Z',
    });
    expect((await api.patch(`/accounts/${id}`, { unlimited: false })).json()).toMatchObject({
      unlimited: false,
      token_balance: 0,
    });
    expect((await api.patch(`/accounts/${id}`, { unlimited: null })).json()).toMatchObject({
      unlimited: true,
      unlimited_override: null,
    });
  });

  it('creates keys (the key only in that answer), lists them by hint, and revokes them', async () => {
    const { id } = await createAccount();
    const res = await api.post(`/accounts/${id}/keys`, { name: 'ci' });
    expect(res.statusCode).toBe(201);
    const created = res.json();
    expect(created).toMatchObject({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^tg_[0-9A-Za-z]{11}$/),
      name: 'ci',
      status: 'active',
    });
    expect(created.hint).toBe(`tg_…${created.key.slice(-4)}`);
    const listed = (await api.get(`/accounts/${id}/keys`)).body;
    expect(listed).not.toContain(created.key);
    expect(JSON.parse(listed).data).toHaveLength(1);
    const revoked = (await api.del(`/keys/${created.id}`)).json();
    expect(revoked).toMatchObject({ id: created.id, status: 'revoked', revoked_at: '2026-04-15T13:55:29Z' });
    expect((await api.get(`/accounts/${id}`)).json().api_key_count).toBe(0);
    expect((await api.post(`/accounts/${id}/keys`)).statusCode).toBe(201);
  });

  it('adds, lists and removes users', async () => {
    const { id } = await createAccount();
    const user = (
      await api.post(`/accounts/${id}/users`, { email: 'Ann@Example.com', role: 'owner' })
    ).json();
    expect(user).toMatchObject({
      id: expect.stringMatching(/^usr_/),
      email: 'ann@example.com',
      role: 'owner',
    });
    await api.post(`/accounts/${id}/users`, { email: 'bob@example.com' });
    expect((await api.get(`/accounts/${id}/users`)).json().data.map((u: { role: string }) => u.role)).toEqual(
      ['owner', 'member'],
    );
    expect((await api.del(`/users/${user.id}`)).statusCode).toBe(200);
    expect((await api.get(`/accounts/${id}`)).json().user_count).toBe(1);
  });

  it('grants, charges and adjusts tokens, and lists the ledger', async () => {
    const { id } = await createAccount({ name: 'Acme', tokens: 100 });
    const charged = await api.post(`/accounts/${id}/tokens`, {
      kind: 'charge',
      amount: 30,
      reason: 'enrich',
    });
    expect(charged.statusCode).toBe(201);
    expect(charged.json()).toMatchObject({
      token_balance: 70,
      replayed: false,
      entry: { kind: 'charge', delta: -30, balance_after: 70 },
    });
    await api.post(`/accounts/${id}/tokens`, { kind: 'grant', amount: 5 });
    await api.post(`/accounts/${id}/tokens`, { kind: 'adjust', amount: -10, reason: 'correction' });
    const ledger = (await api.get(`/accounts/${id}/tokens`)).json().data;
    expect(ledger.map((e: { kind: string; balance_after: number }) => [e.kind, e.balance_after])).toEqual([
      ['grant', 100],
      ['charge', 70],
      ['grant', 75],
      ['adjust', 65],
    ]);
    expect((await api.get(`/accounts/${id}`)).json().token_balance).toBe(65);
  });

  it('replays a token operation with the same idempotency key and counts it once', async () => {
    const { id } = await createAccount({ name: 'Acme', tokens: 100 });
    const body = { kind: 'charge', amount: 10, idempotency_key: 'order-1' };
    const first = await api.post(`/accounts/${id}/tokens`, body);
    const again = await api.post(`/accounts/${id}/tokens`, body);
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().entry).toEqual(first.json().entry);
    expect((await api.get(`/accounts/${id}`)).json().token_balance).toBe(90);
  });

  it('never charges an unlimited account', async () => {
    const { id } = await createAccount({ name: 'Big', plan: 'subscription_97', tokens: 5 });
    const res = await api.post(`/accounts/${id}/tokens`, { kind: 'charge', amount: 1000 });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ entry: null, token_balance: -1, replayed: false });
    expect((await h.store.accounts.get(id))?.tokenBalance).toBe(5);
  });

  it('records usage and answers the windows after it', async () => {
    const { id } = await createAccount();
    const res = await api.post(`/accounts/${id}/usage`, { category: 'enrich', records: 7 });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      account_id: id,
      category: 'enrich',
      recorded: { records: 7, requests: 1 },
      fair_use: {
        enrich: {
          records: {
            '5h': { limit: 100, used: 7, remaining: 93, resets_at: '2026-04-15T18:55:29Z' },
            '1w': { limit: 500, used: 7, remaining: 493, resets_at: '2026-04-22T13:55:29Z' },
          },
          requests: { '5h': { limit: 500, used: 1, remaining: 499, resets_at: '2026-04-15T18:55:29Z' } },
        },
      },
      metadata: {
        fair_use: {
          records_remaining_5h: 93,
          records_reset_5h: '2026-04-15T18:55:29Z',
          records_remaining_1w: 493,
          records_reset_1w: '2026-04-22T13:55:29Z',
        },
      },
    });
  });

  it('lists plans and creates or replaces one with PUT', async () => {
    expect((await api.get('/plans')).json().data.map((p: { id: string }) => p.id)).toEqual([
      'free',
      'subscription_27',
      'subscription_97',
    ]);
    const limits = {
      enrich: { records: { '5h': 1, '1w': 2 }, requests: { '5h': 3 } },
      search: { records: { '5h': 4, '1w': 5 }, requests: { '5h': 6 } },
    };
    const res = await api.put('/plans/tiny', { limits });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      id: 'tiny',
      unlimited: false,
      limits,
      subscription: null,
      stripe_price: null,
      period_tokens: null,
      name: null,
      description: null,
    });
    const { id } = await createAccount({ name: 'T', plan: 'tiny' });
    expect((await api.get(`/accounts/${id}`)).json().fair_use.search.requests['5h'].limit).toBe(6);
  });
});
