import Type from 'typebox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DataTool } from '../../src/tools/tool.js';
import { callTool } from '../calls.js';
import { type AppHarness, accountWithKey, scratchApp } from '../helpers.js';

/** Test-only tools: an enrich tool returning `count` records at 1 token each, and a search tool. */
function testTools() {
  const calls = { enrich: 0, search: 0 };
  let failNext = false;
  const enrich: DataTool = {
    kind: 'data',
    name: 'test_enrich',
    summary: 'test only',
    description: 'returns `count` records',
    args: Type.Object(
      { count: Type.Integer({ minimum: 0 }), returns: Type.Optional(Type.Integer({ minimum: 0 })) },
      { additionalProperties: false },
    ),
    results: Type.Object({ records: Type.Array(Type.Object({ n: Type.Integer() })) }),
    metered: {
      category: 'enrich',
      expectedRecords: (args) => (args as { count: number }).count,
      tokenCost: (_args, records) => records,
    },
    async run(_ctx, args) {
      calls.enrich++;
      if (failNext) {
        failNext = false;
        throw new Error('upstream broke');
      }
      const a = args as { count: number; returns?: number };
      const n = a.returns ?? a.count;
      return { results: { records: Array.from({ length: n }, (_, i) => ({ n: i })) }, records: n };
    },
  };
  const search: DataTool = {
    kind: 'data',
    name: 'test_search',
    summary: 'test only',
    description: 'costs 2 tokens per call',
    args: Type.Object({}, { additionalProperties: false }),
    results: Type.Object({ hits: Type.Integer() }),
    metered: { category: 'search', tokenCost: () => 2 },
    async run() {
      calls.search++;
      return { results: { hits: 3 }, records: 3 };
    },
  };
  return { tools: [enrich, search], calls, failNextEnrich: () => (failNext = true) };
}

describe('metered tools', () => {
  let h: AppHarness;
  let t: ReturnType<typeof testTools>;
  beforeEach(async () => {
    t = testTools();
    h = await scratchApp({ tools: t.tools });
  });
  afterEach(async () => h.close());

  const call = (key: string, tool: string, body: unknown) => callTool(h.app, key, tool, body);
  const state = async (accountId: string) => {
    const s = await h.services.accounts.get(accountId);
    if (!s.ok) throw new Error('no account');
    return s.value;
  };

  it('consumes every window of the call and charges its tokens; metadata reports that category', async () => {
    const { key, accountId } = await accountWithKey(h.services, { tokens: 100 });
    const res = await call(key, 'test_enrich', { count: 7 });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      results: { records: Array.from({ length: 7 }, (_, n) => ({ n })) },
      status: 'ok',
      metadata: {
        fair_use: {
          records_remaining_5h: 93,
          records_reset_5h: '2026-04-15T18:55:29Z',
          records_remaining_1w: 493,
          records_reset_1w: '2026-04-22T13:55:29Z',
        },
        tokens_charged: 7,
        tokens_remaining: 93,
      },
    });
    const s = await state(accountId);
    expect(s.fair_use.enrich.requests['5h'].used).toBe(1);
    expect(s.fair_use.enrich.records['5h'].used).toBe(7);
    expect(s.fair_use.enrich.records['1w'].used).toBe(7);
    expect(s.fair_use.search.records['5h'].used).toBe(0);
    expect(s.token_balance).toBe(93);

    const search = await call(key, 'test_search', {});
    expect(search.json().metadata.fair_use).toMatchObject({
      records_remaining_5h: 47,
      records_remaining_1w: 247,
    });
  });

  it('never charges an unlimited account, but still meters its fair use', async () => {
    const { key, accountId } = await accountWithKey(h.services, { plan: 'subscription_97' });
    expect((await call(key, 'test_enrich', { count: 5 })).statusCode).toBe(200);
    const s = await state(accountId);
    expect(s.token_balance).toBe(-1);
    expect(s.fair_use.enrich.records['5h'].used).toBe(5);
  });

  it('answers 403 account_suspended before running the tool, and spends nothing', async () => {
    const { key, accountId } = await accountWithKey(h.services, { tokens: 100 });
    await h.services.accounts.update(accountId, { status: 'suspended' });
    const res = await call(key, 'test_enrich', { count: 1 });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('account_suspended');
    expect(t.calls.enrich).toBe(0);
    expect((await state(accountId)).fair_use.enrich.requests['5h'].used).toBe(0);
  });

  it('answers 429 fair_use_exceeded with the window and its reset, before running the tool', async () => {
    const { key, accountId } = await accountWithKey(h.services, { tokens: 1000 });
    expect((await call(key, 'test_enrich', { count: 95 })).statusCode).toBe(200);
    h.clock.advance(60);
    const res = await call(key, 'test_enrich', { count: 6 });
    expect(res.statusCode).toBe(429);
    expect(res.json()).toMatchObject({
      code: 'fair_use_exceeded',
      window: 'enrich.records.5h',
      resets_at: '2026-04-15T18:55:29Z',
    });
    expect(t.calls.enrich).toBe(1);
    const s = await state(accountId);
    expect(s.fair_use.enrich.records['5h'].used).toBe(95);
    expect(s.fair_use.enrich.requests['5h'].used).toBe(1);
    expect(s.token_balance).toBe(905);
  });

  it('answers 402 insufficient_tokens before running the tool, and spends no fair use', async () => {
    const { key, accountId } = await accountWithKey(h.services, { tokens: 3 });
    const res = await call(key, 'test_enrich', { count: 4 });
    expect(res.statusCode).toBe(402);
    expect(res.json()).toMatchObject({ code: 'insufficient_tokens', token_balance: 3 });
    expect(t.calls.enrich).toBe(0);
    const s = await state(accountId);
    expect(s.fair_use.enrich.requests['5h'].used).toBe(0);
    expect(s.token_balance).toBe(3);
  });

  it('spends nothing when the tool fails', async () => {
    const { key, accountId } = await accountWithKey(h.services, { tokens: 10 });
    t.failNextEnrich();
    const res = await call(key, 'test_enrich', { count: 2 });
    expect(res.statusCode).toBe(500);
    expect(res.json().code).toBe('internal_error');
    const s = await state(accountId);
    expect(s.fair_use.enrich.requests['5h'].used).toBe(0);
    expect(s.token_balance).toBe(10);
  });

  it('refuses at commit, spending nothing, when the tool returned more than still fits', async () => {
    const { key, accountId } = await accountWithKey(h.services, { tokens: 1000 });
    expect((await call(key, 'test_enrich', { count: 1, returns: 101 })).json()).toMatchObject({
      code: 'fair_use_exceeded',
      window: 'enrich.records.5h',
      resets_at: null,
    });
    expect((await call(key, 'test_enrich', { count: 1, returns: 11 })).statusCode).toBe(200);
    const tooCostly = await call(key, 'test_enrich', { count: 0, returns: 990 });
    expect(tooCostly.statusCode).toBe(429);
    const s = await state(accountId);
    expect(s.fair_use.enrich.records['5h'].used).toBe(11);
    expect(s.fair_use.enrich.requests['5h'].used).toBe(1);
    expect(s.token_balance).toBe(989);
  });

  it('checks authentication before arguments, and arguments before metering', async () => {
    const { key, accountId } = await accountWithKey(h.services, { tokens: 10 });
    expect((await call('tg_AAAAAAAAAAA', 'test_enrich', { nope: 1 })).statusCode).toBe(401);
    const bad = await call(key, 'test_enrich', { count: -1 });
    expect(bad.json().code).toBe('invalid_arguments');
    expect((await state(accountId)).fair_use.enrich.requests['5h'].used).toBe(0);
  });

  it('leaves get_account free: reading the account after metered calls changes nothing', async () => {
    const { key, accountId } = await accountWithKey(h.services, { tokens: 10 });
    await call(key, 'test_enrich', { count: 2 });
    const before = await state(accountId);
    await callTool(h.app, key, 'get_account');
    expect(await state(accountId)).toEqual(before);
  });
});
