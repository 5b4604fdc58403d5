/**
 * Meters of the operator's own over HTTP: a plan of custom categories, units and windows through
 * the admin plans API; get_account lists them in the plan's order (and matches its declared
 * schema); usage by `{category, unit, amount}` with clear refusals; a limit removed stops refusing
 * at once; and a catalogue tool metered in a unit of its own against a real upstream.
 */
import { Value } from 'typebox/value';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getAccount } from '../../src/tools/get-account.js';
import { callTool } from '../calls.js';
import { type AppHarness, accountWithKey, scratchApp } from '../helpers.js';
import { sendJson, startTestUpstream, type TestUpstream } from '../upstream/test-upstream.js';
import { admin } from './admin.test-helpers.js';

const TEAM = {
  scrape: { records: { '1d': 100 }, pages: { '1h': 5, '1d': 20 }, requests: { '1h': 10 } },
  ai: { messages: { '2w': 50 } },
};

describe("meters of the operator's own", () => {
  let upstream: TestUpstream;
  let h: AppHarness;
  beforeAll(async () => {
    upstream = await startTestUpstream();
  });
  afterAll(async () => upstream.close());
  beforeEach(async () => {
    upstream.reset();
    h = await scratchApp({ catalogue: {} });
    upstream.on('pages', (call, res) => {
      const { n } = call.body as { n: number };
      sendJson(res, 200, { results: Array.from({ length: n }, (_, i) => ({ page: i })) });
    });
  });
  afterEach(async () => h.close());

  const teamAccount = async () => {
    expect((await admin(h).put('/plans/team', { limits: TEAM })).statusCode).toBe(200);
    return accountWithKey(h.services, { plan: 'team', tokens: 100 });
  };
  const usage = (accountId: string, body: unknown) => admin(h).post(`/accounts/${accountId}/usage`, body);

  it('creates a plan of its own meters, answered and listed in its order', async () => {
    const res = await admin(h).put('/plans/team', { limits: TEAM });
    expect(res.statusCode).toBe(200);
    expect(JSON.stringify(res.json().limits)).toBe(JSON.stringify(TEAM));
    const listed = (await admin(h).get('/plans')).json().data.find((p: { id: string }) => p.id === 'team');
    expect(JSON.stringify(listed.limits)).toBe(JSON.stringify(TEAM));
  });

  it.each([
    [{ scrape: { pages: { '1y': 5 } } }, 'window "1y" must be <n>m, <n>h, <n>d or <n>w'],
    [{ Scrape: { pages: { '1d': 5 } } }, 'category "Scrape" must match [a-z][a-z0-9_]{0,31}'],
    [{ scrape: { pages: { '1d': -1 } } }, 'limits.scrape.pages.1d must be a whole number >= 0.'],
    [{ enrich: { records: { '5h': 5 } } }, 'missing: enrich.records.1w'],
    [{}, 'A plan needs at least one limit'],
  ])('refuses the limits %j with a clear message', async (limits, message) => {
    const res = await admin(h).put('/plans/bad', { limits });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain(message);
  });

  it('get_account lists every category, unit and window in the plan order, as its schema declares', async () => {
    const { key, accountId } = await teamAccount();
    expect((await usage(accountId, { category: 'scrape', unit: 'pages', amount: 3 })).statusCode).toBe(200);
    const res = await callTool(h.app, key, 'get_account', {});
    const body = res.json();
    expect([...Value.Errors(getAccount.response, body)]).toEqual([]);
    const fairUse = body.results.fair_use;
    expect(Object.keys(fairUse)).toEqual(['scrape', 'ai']);
    expect(Object.keys(fairUse.scrape)).toEqual(['records', 'pages', 'requests']);
    expect(Object.keys(fairUse.scrape.pages)).toEqual(['1h', '1d']);
    expect(fairUse.scrape.pages['1h']).toMatchObject({ limit: 5, used: 3, remaining: 2 });
    expect(fairUse.scrape.requests['1h']).toMatchObject({ limit: 10, used: 1 });
    expect(fairUse.ai.messages['2w']).toEqual({ limit: 50, used: 0, remaining: 50, resets_at: null });
    // The plan's first category's records windows, by name.
    expect(Object.keys(body.metadata.fair_use)).toEqual(['records_remaining_1d', 'records_reset_1d']);
    expect(body.metadata.fair_use.records_remaining_1d).toBe(100);
  });

  it('consumes by unit and amount, and refuses what the plan does not know, naming what it does', async () => {
    const { accountId } = await teamAccount();
    const ok = await usage(accountId, {
      category: 'scrape',
      unit: 'pages',
      amount: 4,
      idempotency_key: 'k1',
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ category: 'scrape', recorded: { pages: 4, requests: 1 } });
    expect(ok.body).toContain('"recorded":{"pages":4,"requests":1}');
    expect(Object.keys(ok.json().fair_use)).toEqual(['scrape']);
    expect(ok.json().fair_use.scrape.pages['1d'].used).toBe(4);
    // The metadata summarises the unit given.
    expect(ok.json().metadata.fair_use).toMatchObject({ pages_remaining_1h: 1, pages_remaining_1d: 16 });
    const again = await usage(accountId, {
      category: 'scrape',
      unit: 'pages',
      amount: 4,
      idempotency_key: 'k1',
    });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(ok.body);
    const records = await usage(accountId, { category: 'scrape', records: 7 });
    expect(records.body).toContain('"recorded":{"records":7,"requests":1}');
    const messages = await usage(accountId, { category: 'ai', unit: 'messages', amount: 2 });
    expect(messages.json().fair_use.ai.messages['2w'].used).toBe(2);

    const refusals: Array<[unknown, string]> = [
      [{ category: 'people', records: 1 }, 'category must be one of scrape, ai (got "people").'],
      [{ category: 'ai', unit: 'pages', amount: 1 }, 'unit must be one of messages for ai (got "pages").'],
      [{ category: 'ai', records: 1 }, 'unit must be one of messages for ai (got "records").'],
      [
        { category: 'scrape', unit: 'pages', amount: 1, records: 1 },
        'Give either records or unit and amount',
      ],
      [{ category: 'scrape', unit: 'pages' }, 'amount is required with unit.'],
      [{ category: 'scrape', unit: 'pages', amount: 0, requests: 0 }, 'Nothing to record'],
    ];
    for (const [body, message] of refusals) {
      const res = await usage(accountId, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().message).toContain(message);
    }
    const over = await usage(accountId, { category: 'scrape', unit: 'pages', amount: 2 });
    expect(over.statusCode).toBe(429);
    expect(over.json()).toMatchObject({
      code: 'fair_use_exceeded',
      window: 'scrape.pages.1h',
      limit: 5,
      used: 4,
    });
  });

  it('ends a window’s enforcement at once when the plan drops its limit', async () => {
    const { accountId } = await teamAccount();
    expect((await usage(accountId, { category: 'scrape', unit: 'pages', amount: 5 })).statusCode).toBe(200);
    expect((await usage(accountId, { category: 'scrape', unit: 'pages', amount: 1 })).statusCode).toBe(429);
    const lifted = { ...TEAM, scrape: { ...TEAM.scrape, pages: { '1d': 20 } } };
    expect((await admin(h).put('/plans/team', { limits: lifted })).statusCode).toBe(200);
    const res = await usage(accountId, { category: 'scrape', unit: 'pages', amount: 1 });
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json().fair_use.scrape.pages)).toEqual(['1d']);
    expect(res.json().fair_use.scrape.pages['1d'].used).toBe(6);
  });

  it('meters a catalogue tool in its metering.unit, and one request a call', async () => {
    const { key, accountId } = await teamAccount();
    const imported = await h.services.catalogue.import({
      tools: [
        {
          name: 'scrape_pages',
          upstream: { url: `${upstream.url}/pages` },
          metering: { category: 'scrape', unit: 'pages', tokens_per_record: 1 },
        },
      ],
    });
    expect(imported.ok).toBe(true);
    // Its price, as the API reference (and the console's Connect page) describes it, per page.
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.paths['/api/v1/tools/scrape_pages'].post.description).toContain(
      'Metered: scrape; 0 tokens per call, 1 per page.',
    );
    const call = (n: number) => callTool(h.app, key, 'scrape_pages', { n });
    const hit = await call(3);
    expect(hit.statusCode).toBe(200);
    // The windows of its own unit, pages; not the category's records.
    expect(hit.json().metadata).toMatchObject({ tokens_charged: 3, fair_use: { pages_remaining_1h: 2 } });
    expect(Object.keys(hit.json().metadata.fair_use)).toEqual([
      'pages_remaining_1h',
      'pages_reset_1h',
      'pages_remaining_1d',
      'pages_reset_1d',
    ]);
    expect(hit.json().metadata.fair_use.pages_remaining_1d).toBe(17);
    const snapshot = await h.store.accounts.snapshot(accountId);
    const used = Object.fromEntries(snapshot!.windows.map((w) => [`${w.unit}.${w.window}`, w.used]));
    expect(used).toEqual({ 'pages.1d': 3, 'pages.1h': 3, 'requests.1h': 1 });
    // 3 of 5 pages this hour: a call returning 3 more passes the limit and is refused, charged nothing.
    const over = await call(3);
    expect(over.statusCode).toBe(429);
    expect(over.json().window).toBe('scrape.pages.1h');
    expect(
      (await h.services.accounts.get(accountId)).ok && (await h.store.accounts.get(accountId))?.tokenBalance,
    ).toBe(97);
  });
});
