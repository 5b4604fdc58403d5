/**
 * Every get_account body matches the response schema the route declares, whether it was rendered
 * from a read of the store or answered from memory (the cached answer goes out as raw JSON, past
 * Fastify's serialiser, so nothing else checks it): cold, warm, after consumptions and charges,
 * across a window's end, for unlimited and suspended accounts.
 */
import { Value } from 'typebox/value';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getAccountResponse } from '../../src/service/views.js';
import { getAccount } from '../../src/tools/get-account.js';
import { callTool } from '../calls.js';
import { type AppHarness, accountWithKey, scratchApp } from '../helpers.js';

describe('get_account bodies against the declared response schema', () => {
  let h: AppHarness;
  let checked = 0;
  beforeEach(async () => {
    h = await scratchApp();
    checked = 0;
  });
  afterEach(async () => h.close());

  /** Calls get_account; the body must match the schema and equal the answer rendered from a fresh read. */
  async function call(key: string, accountId: string) {
    const res = await callTool(h.app, key, 'get_account', {});
    expect(res.statusCode).toBe(200);
    const body: unknown = res.json();
    const errors = [...Value.Errors(getAccount.response, body)].map((e) => JSON.stringify(e));
    expect(errors).toEqual([]);
    expect(Value.Check(getAccount.response, body)).toBe(true);
    const snapshot = await h.store.accounts.snapshot(accountId);
    expect(body).toEqual(JSON.parse(JSON.stringify(getAccountResponse(snapshot!, h.clock.now() / 1000))));
    checked++;
    return body as ReturnType<typeof getAccountResponse>;
  }

  it('cold and warm, before and after consumptions, charges and a window end', async () => {
    const { key, accountId } = await accountWithKey(h.services, { tokens: 50 });
    await call(key, accountId); // read from the store
    await call(key, accountId); // answered from memory
    for (let i = 0; i < 3; i++) {
      const used = await h.services.usage.record(accountId, { category: 'enrich', records: 2 });
      expect(used.ok).toBe(true);
      const body = await call(key, accountId);
      expect(body.results.fair_use.enrich.records['5h'].used).toBe(2 * (i + 1));
      await call(key, accountId);
    }
    await h.services.tokens.apply(accountId, { kind: 'charge', amount: 7 });
    expect((await call(key, accountId)).results.token_balance).toBe(43);
    h.clock.advance(1);
    await call(key, accountId);
    // Past the 5-hour window's end: resets_at null again, the metadata's reset a window from now.
    h.clock.advance(18_000);
    const after = await call(key, accountId);
    expect(after.results.fair_use.enrich.records['5h'].resets_at).toBeNull();
    await call(key, accountId);
    expect(checked).toBe(12);
  });

  it('an unlimited account and a suspended one', async () => {
    const unlimited = await accountWithKey(h.services, { unlimited: true });
    expect((await call(unlimited.key, unlimited.accountId)).results.token_balance).toBe(-1);
    await call(unlimited.key, unlimited.accountId);
    const suspended = await accountWithKey(h.services, { name: 'Globex' });
    await call(suspended.key, suspended.accountId);
    expect((await h.services.accounts.update(suspended.accountId, { status: 'suspended' })).ok).toBe(true);
    expect((await call(suspended.key, suspended.accountId)).results.status).toBe('suspended');
    await call(suspended.key, suspended.accountId);
    expect(checked).toBe(5);
  });

  it('the check itself refuses a body that strays from the schema', () => {
    const body = { results: {}, status: 'ok', metadata: { fair_use: {} } };
    expect(Value.Check(getAccount.response, body)).toBe(false);
  });
});
