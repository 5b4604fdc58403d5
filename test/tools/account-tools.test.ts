/**
 * The account tools get_billing and get_usage, and the usage counts behind get_usage: a mix of hits,
 * misses, refusals and errors over HTTP and MCP, UTC day boundaries on the harness's clock, dense
 * days, and counts read whether or not they have been written yet.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { callTool } from '../calls.js';
import { type AppHarness, accountWithKey, scratchApp } from '../helpers.js';
import { connect } from '../mcp/clients.js';
import { sendJson, startTestUpstream, type TestUpstream } from '../upstream/test-upstream.js';

let upstream: TestUpstream;
beforeAll(async () => {
  upstream = await startTestUpstream();
  upstream.on('people', (call, res) => {
    const { n } = call.body as { n: number };
    if (n < 0) return sendJson(res, 503, { message: 'down' });
    if (n === 0) return sendJson(res, 200, { results: [], status: 'not_found' });
    sendJson(res, 200, { results: Array.from({ length: n }, (_, i) => ({ i })) });
  });
});
afterAll(async () => upstream.close());

describe('account tools', () => {
  let h: AppHarness;
  beforeEach(async () => {
    h = await scratchApp({ catalogue: {} });
    const imported = await h.services.catalogue.import({
      tools: [
        {
          name: 'find_people',
          input_schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
          upstream: { url: `${upstream.url}/people` },
          metering: { category: 'search', tokens_per_call: 1, tokens_per_record: 2 },
        },
        {
          name: 'lookup',
          upstream: { url: `${upstream.url}/people` },
          metering: { category: 'enrich', tokens_per_call: 3 },
        },
        { name: 'ping', upstream: { url: `${upstream.url}/people` } },
      ],
    });
    expect(imported.ok).toBe(true);
  });
  afterEach(async () => h.close());

  const call = (key: string, tool: string, body: unknown = {}) => callTool(h.app, key, tool, body);

  describe('get_billing', () => {
    it('a plan that is no subscription: status none, no period, and every tool with its cost', async () => {
      const { key } = await accountWithKey(h.services, { tokens: 70 });
      const res = await call(key, 'get_billing');
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        results: {
          plan: 'free',
          subscription_status: 'none',
          token_balance: 70,
          unlimited: false,
          current_period_start: null,
          current_period_end: null,
          token_costs: { get_account: 0, get_billing: 0, get_usage: 0, find_people: 2, lookup: 3, ping: 0 },
          // find_people's 2 is per record, lookup's 3 per call: the details tell them apart.
          token_cost_details: {
            get_account: { per_call: 0, per_record: 0, unit: 'records' },
            get_billing: { per_call: 0, per_record: 0, unit: 'records' },
            get_usage: { per_call: 0, per_record: 0, unit: 'records' },
            find_people: { per_call: 1, per_record: 2, unit: 'records' },
            lookup: { per_call: 3, per_record: 0, unit: 'records' },
            ping: { per_call: 0, per_record: 0, unit: 'records' },
          },
        },
        status: 'ok',
        metadata: { tokens_charged: 0, tokens_remaining: 70 },
      });
    });

    it('a monthly subscription: periods a month long from when the account joined the plan', async () => {
      const { key, accountId } = await accountWithKey(h.services, { plan: 'subscription_27', tokens: 5 });
      let results = (await call(key, 'get_billing')).json().results;
      expect(results).toMatchObject({
        plan: 'subscription_27',
        subscription_status: 'active',
        current_period_start: '2026-04-15T13:55:29Z',
        current_period_end: '2026-05-15T13:55:29Z',
      });
      h.clock.advance(45 * 86_400);
      results = (await call(key, 'get_billing')).json().results;
      expect(results).toMatchObject({
        current_period_start: '2026-05-15T13:55:29Z',
        current_period_end: '2026-06-15T13:55:29Z',
      });
      await h.services.accounts.update(accountId, { status: 'suspended' });
      expect((await call(key, 'get_billing')).json().results.subscription_status).toBe('suspended');
      // Joining another subscription plan starts its periods anew.
      await h.services.accounts.update(accountId, { status: 'active', plan: 'subscription_97' });
      expect((await call(key, 'get_billing')).json().results).toMatchObject({
        plan: 'subscription_97',
        unlimited: true,
        token_balance: -1,
        current_period_start: '2026-05-30T13:55:29Z',
      });
    });

    it('takes no arguments', async () => {
      const { key } = await accountWithKey(h.services);
      expect((await call(key, 'get_billing', { plan: 'x' })).json()).toMatchObject({
        code: 'invalid_arguments',
      });
    });
  });

  describe('get_usage', () => {
    it('counts hits, misses, refusals and errors, over HTTP and MCP, written or not yet', async () => {
      const { key } = await accountWithKey(h.services, { tokens: 20 });
      expect((await call(key, 'find_people', { n: 3 })).statusCode).toBe(200); // hit, 3 records, 7 tokens
      expect((await call(key, 'find_people', { n: 0 })).statusCode).toBe(200); // miss
      expect((await call(key, 'find_people', { n: -1 })).statusCode).toBe(502); // upstream error
      expect((await call(key, 'find_people', {})).statusCode).toBe(400); // arguments
      expect((await call(key, 'lookup', {})).statusCode).toBe(200); // hit, 0 records, 3 tokens
      expect((await call(key, 'find_people', { n: 5 })).statusCode).toBe(402); // 11 > 10 tokens left
      expect((await call(key, 'ping', {})).statusCode).toBe(200); // free, no records
      expect((await call(key, 'no_such_tool', {})).statusCode).toBe(404);
      expect((await call(key, 'get_account')).statusCode).toBe(200);
      expect((await call('tg_AAAAAAAAAAA', 'get_account')).statusCode).toBe(401); // not authenticated: not counted

      const url = await h.app.listen({ host: '127.0.0.1', port: 0 });
      const mcp = await connect('v2', url, key);
      expect((await mcp.callTool('find_people', { n: 2 })).isError).toBeFalsy(); // hit, 2 records, 5 tokens
      expect((await mcp.callTool('find_people', { n: 9 })).isError).toBe(true); // 402
      await mcp.close();

      const expected = { calls: 11, tokens: 15, records: 5, with_data: 2, without_data: 4, failed: 5 };
      const before = (await call(key, 'get_usage')).json().results;
      expect(before.totals).toEqual(expected);
      await h.usageCounters.flush();
      const after = (await call(key, 'get_usage', { period: 'today' })).json();
      // get_usage's own call before this one is counted too.
      expect(after.results.totals).toEqual({ ...expected, calls: 12, without_data: 5 });
      expect(after.results).toMatchObject({
        period: 'today',
        start_date: '2026-04-15',
        end_date: '2026-04-15',
        token_balance: 5,
      });
      expect(after.results.days).toEqual([{ date: '2026-04-15', ...after.results.totals }]);
      expect(after.metadata).toEqual({ tokens_charged: 0, tokens_remaining: 5 });
    });

    it('days are UTC days, every one of the period, days without calls as zeros', async () => {
      const { key } = await accountWithKey(h.services, { tokens: 100 });
      h.clock.set(Date.UTC(2026, 3, 15, 23, 59, 59));
      await call(key, 'ping');
      h.clock.advance(2);
      await call(key, 'ping');
      await call(key, 'ping');
      await h.usageCounters.flush();
      const week = (await call(key, 'get_usage', { period: 'week' })).json().results;
      expect(week.start_date).toBe('2026-04-10');
      expect(week.end_date).toBe('2026-04-16');
      expect(week.days.map((d: { date: string; calls: number }) => [d.date, d.calls])).toEqual([
        ['2026-04-10', 0],
        ['2026-04-11', 0],
        ['2026-04-12', 0],
        ['2026-04-13', 0],
        ['2026-04-14', 0],
        ['2026-04-15', 1],
        ['2026-04-16', 2],
      ]);
      const month = (await call(key, 'get_usage', { period: 'month' })).json().results;
      expect(month.days).toHaveLength(30);
      expect(month.totals.calls).toBe(4);
    });

    it('billing_cycle is the subscription period up to today, or month without one', async () => {
      const sub = await accountWithKey(h.services, { plan: 'subscription_27' });
      h.clock.advance(33 * 86_400);
      const cycle = (await call(sub.key, 'get_usage', { period: 'billing_cycle' })).json().results;
      expect(cycle).toMatchObject({ start_date: '2026-05-15', end_date: '2026-05-18' });
      expect(cycle.days).toHaveLength(4);
      const free = await accountWithKey(h.services);
      const month = (await call(free.key, 'get_usage', { period: 'billing_cycle' })).json().results;
      expect(month.days).toHaveLength(30);
    });

    it('a period outside the four values is 400 invalid_arguments', async () => {
      const { key } = await accountWithKey(h.services);
      for (const period of ['year', '', 7, null]) {
        const res = await call(key, 'get_usage', { period });
        expect(res.statusCode).toBe(400);
        expect(res.json()).toMatchObject({
          code: 'invalid_arguments',
          message: 'Invalid arguments: period must be one of "today", "week", "month", "billing_cycle".',
        });
      }
    });

    it("counts only the calling account's calls", async () => {
      const a = await accountWithKey(h.services);
      const b = await accountWithKey(h.services);
      await call(a.key, 'ping');
      await call(a.key, 'ping');
      const usage = (await call(b.key, 'get_usage')).json().results;
      expect(usage.totals.calls).toBe(0);
    });
  });
});
