import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { callTool } from '../calls.js';
import { type AppHarness, accountWithKey, scratchApp, T0 } from '../helpers.js';

const call = (
  h: AppHarness,
  key: string,
  body: string | undefined = '{}',
  headers: Record<string, string> = {},
) =>
  callTool(h.app, key, 'get_account', undefined, {
    headers,
    ...(body === undefined ? {} : { rawBody: body }),
  });

describe('get_account, happy paths', () => {
  let h: AppHarness;
  beforeEach(async () => {
    h = await scratchApp();
  });
  afterEach(async () => h.close());

  it('returns results, status and metadata with every field of the spec, in its types', async () => {
    const { key, accountId } = await accountWithKey(h.services, { name: 'Acme', plan: 'free', tokens: 250 });
    const res = await call(h, key);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = res.json();
    expect(Object.keys(body)).toEqual(['results', 'status', 'metadata']);
    expect(body.status).toBe('ok');
    const window = (limit: number) => ({ limit, used: 0, remaining: limit, resets_at: null });
    expect(body.results).toEqual({
      id: accountId,
      name: 'Acme',
      status: 'active',
      plan: 'free',
      token_balance: 250,
      unlimited: false,
      fair_use: {
        enrich: { records: { '5h': window(100), '1w': window(500) }, requests: { '5h': window(500) } },
        search: { records: { '5h': window(50), '1w': window(250) }, requests: { '5h': window(250) } },
      },
      api_key_count: 1,
      user_count: 0,
      created_at: '2026-04-15T13:55:29Z',
    });
    // Windows not running report their full limit and a reset a full length from now.
    expect(body.metadata).toEqual({
      fair_use: {
        records_remaining_5h: 100,
        records_reset_5h: '2026-04-15T18:55:29Z',
        records_remaining_1w: 500,
        records_reset_1w: '2026-04-22T13:55:29Z',
      },
    });
  });

  it('takes an absent body, an empty body and a charset parameter as {}', async () => {
    const { key } = await accountWithKey(h.services);
    expect((await call(h, key, undefined)).statusCode).toBe(200);
    expect((await call(h, key, '')).statusCode).toBe(200);
    expect((await call(h, key, '{}', { 'content-type': 'application/json; charset=utf-8' })).statusCode).toBe(
      200,
    );
  });

  it('reports an unlimited account with token_balance -1 and unlimited true', async () => {
    const { key } = await accountWithKey(h.services, { plan: 'subscription_97', tokens: 40 });
    const results = (await call(h, key)).json().results;
    expect(results.unlimited).toBe(true);
    expect(results.token_balance).toBe(-1);
    expect(results.plan).toBe('subscription_97');
    expect(results.fair_use.enrich.records['5h'].limit).toBe(15000);
  });

  it('lets the account override its plan either way', async () => {
    const limited = await accountWithKey(h.services, {
      plan: 'subscription_97',
      unlimited: false,
      tokens: 40,
    });
    expect((await call(h, limited.key)).json().results).toMatchObject({
      unlimited: false,
      token_balance: 40,
    });
    const unlimited = await accountWithKey(h.services, { plan: 'free', unlimited: true });
    expect((await call(h, unlimited.key)).json().results).toMatchObject({
      unlimited: true,
      token_balance: -1,
    });
  });

  it('counts active keys only, and every user', async () => {
    const { key, accountId } = await accountWithKey(h.services);
    const second = await h.services.keys.create(accountId, 'second');
    const third = await h.services.keys.create(accountId, 'third');
    if (!second.ok || !third.ok) throw new Error('key creation failed');
    await h.services.keys.revoke(third.value.id);
    await h.services.users.add(accountId, 'a@example.com', 'owner');
    await h.services.users.add(accountId, 'b@example.com');
    const results = (await call(h, key)).json().results;
    expect(results.api_key_count).toBe(2);
    expect(results.user_count).toBe(2);
  });

  it('shows running windows with their reset time, and metadata for the enrich records windows', async () => {
    const { key, accountId } = await accountWithKey(h.services);
    const used = await h.services.usage.record(accountId, { category: 'enrich', records: 7, requests: 1 });
    expect(used.ok).toBe(true);
    h.clock.advance(3600);
    const body = (await call(h, key)).json();
    expect(body.results.fair_use.enrich.records['5h']).toEqual({
      limit: 100,
      used: 7,
      remaining: 93,
      resets_at: '2026-04-15T18:55:29Z',
    });
    expect(body.results.fair_use.enrich.requests['5h']).toMatchObject({ used: 1, remaining: 499 });
    expect(body.results.fair_use.search.records['5h'].resets_at).toBeNull();
    expect(body.metadata.fair_use).toEqual({
      records_remaining_5h: 93,
      records_reset_5h: '2026-04-15T18:55:29Z',
      records_remaining_1w: 493,
      records_reset_1w: '2026-04-22T13:55:29Z',
    });
  });

  it('shows a window as over once its end passes, though nothing changed in between', async () => {
    const { key, accountId } = await accountWithKey(h.services);
    expect((await h.services.usage.record(accountId, { category: 'enrich', records: 7 })).ok).toBe(true);
    const running = (await call(h, key)).json();
    expect(running.results.fair_use.enrich.records['5h']).toMatchObject({ used: 7, remaining: 93 });

    h.clock.advance(18_000); // the 5h windows end now; the 1w window runs on
    const over = (await call(h, key)).json();
    expect(over.results.fair_use.enrich.records['5h']).toEqual({
      limit: 100,
      used: 0,
      remaining: 100,
      resets_at: null,
    });
    expect(over.results.fair_use.enrich.records['1w']).toMatchObject({ used: 7, remaining: 493 });
    expect(over.metadata.fair_use).toMatchObject({
      records_remaining_5h: 100,
      records_reset_5h: '2026-04-15T23:55:29Z', // a full 5h from now, as for any window not running
      records_remaining_1w: 493,
    });

    h.clock.advance(-18_000); // a clock set back: the window runs again
    expect((await call(h, key)).json()).toEqual(running);
  });

  it('changes no balance and no window, however often it is called', async () => {
    const { key, accountId } = await accountWithKey(h.services, { tokens: 10 });
    const before = await h.store.accounts.snapshot(accountId);
    for (let i = 0; i < 5; i++) expect((await call(h, key)).statusCode).toBe(200);
    const after = await h.store.accounts.snapshot(accountId);
    expect(after?.account.tokenBalance).toBe(10);
    expect(after?.windows).toEqual(before?.windows);
    expect(after?.windows).toEqual([]);
    const ledger = await h.services.tokens.ledger(accountId);
    expect(ledger.ok && ledger.value.length).toBe(1);
  });

  it('still answers a suspended account, which reads its own status', async () => {
    const { key, accountId } = await accountWithKey(h.services);
    await h.services.accounts.update(accountId, { status: 'suspended' });
    const res = await call(h, key);
    expect(res.statusCode).toBe(200);
    expect(res.json().results.status).toBe('suspended');
  });

  it('answers with an x-request-id header that names the request', async () => {
    const { key } = await accountWithKey(h.services);
    const res = await call(h, key);
    expect(res.headers['x-request-id']).toMatch(/^req_[0-9a-z]{26}$/);
  });

  it('formats every timestamp as ISO 8601 UTC with whole seconds', async () => {
    h.clock.set(T0 + 999);
    const { key } = await accountWithKey(h.services);
    const body = (await call(h, key)).json();
    for (const t of [
      body.results.created_at,
      body.metadata.fair_use.records_reset_5h,
      body.metadata.fair_use.records_reset_1w,
    ]) {
      expect(t).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    }
  });
});
