/**
 * A catalogue tool metered in pages beside one metered in records, through ToolCalls on a real
 * upstream, on SQLite and PostgreSQL: each call's metadata.fair_use summarises its own unit's
 * windows, get_billing names each tool's unit, and get_usage and the operator's history keep pages
 * apart from records (before and after the counts are written).
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/domain/clock.js';
import { DEFAULT_PLANS } from '../../src/domain/plans.js';
import type { ServiceDeps } from '../../src/service/context.js';
import { createServices, type Services } from '../../src/service/index.js';
import { UsageCounters } from '../../src/service/usage-counters.js';
import { withReadCache } from '../../src/store/cached-reads.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { Store } from '../../src/store/store.js';
import { type Caller, type Door, ToolCalls } from '../../src/tools/call.js';
import { type ServedCatalogue, serveCatalogue } from '../../src/tools/catalogue.js';
import { TOOLS } from '../../src/tools/index.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { accountWithKey, captureLogs, KEY_SECRET, scratchServices, T0 } from '../helpers.js';
import { POSTGRES_URL, postgresAvailable, scratchSchemaName } from '../postgres.js';
import { sendJson, startTestUpstream, type TestUpstream } from '../upstream/test-upstream.js';

const TODAY = '2026-04-15';
const TEAM = {
  scrape: { records: { '1d': 100 }, pages: { '1h': 5, '1d': 20 }, requests: { '1h': 10 } },
};

interface Backed {
  store: Store;
  deps: ServiceDeps;
  usageCounters: UsageCounters;
  close(): Promise<void>;
}

async function onPostgres(): Promise<Backed> {
  const schema = scratchSchemaName();
  const { store, reads } = withReadCache(
    (observer) => new PostgresStore({ url: POSTGRES_URL, schema, observer }),
  );
  await store.migrate(DEFAULT_PLANS, Math.floor(T0 / 1000));
  const clock = new FixedClock(T0);
  const usageCounters = new UsageCounters(store.usageHistory, clock);
  const deps = { store, reads, clock, keyPrefix: 'tg', keySecret: KEY_SECRET, usageCounters };
  return {
    store,
    deps,
    usageCounters,
    async close() {
      await usageCounters.stop().catch(() => {});
      await store.dropSchema().catch(() => {});
      await store.close();
    },
  };
}

const BACKENDS: { name: string; make: () => Promise<Backed> }[] = [
  { name: 'SQLite', make: () => scratchServices() },
  ...((await postgresAvailable()) ? [{ name: 'PostgreSQL', make: onPostgres }] : []),
];

let upstream: TestUpstream;
beforeAll(async () => {
  upstream = await startTestUpstream();
  upstream.on('items', (call, res) => {
    const { n } = call.body as { n: number };
    sendJson(res, 200, { results: Array.from({ length: n }, (_, i) => ({ i })) });
  });
});
afterAll(async () => upstream.close());

describe.each(BACKENDS)('a tool metered in pages, on $name', ({ make }) => {
  let b: Backed;
  let served: ServedCatalogue;
  let calls: ToolCalls;
  let services: Services;
  let who: { accountId: string; keyId: string };
  const { logger } = captureLogs('silent');

  beforeEach(async () => {
    b = await make();
    served = await serveCatalogue({ catalogue: b.store.catalogue, env: {}, upstreamEnv: [] });
    services = createServices({ ...b.deps, catalogueChanged: () => served.refresh() });
    const items = { url: `${upstream.url}/items` };
    const imported = await services.catalogue.import({
      tools: [
        {
          name: 'fetch_pages',
          upstream: items,
          metering: { category: 'scrape', unit: 'pages', tokens_per_record: 1 },
        },
        {
          name: 'people',
          upstream: items,
          metering: { category: 'scrape', tokens_per_call: 1, tokens_per_record: 2 },
        },
      ],
    });
    expect(imported.ok).toBe(true);
    expect((await services.plans.put('team', { limits: TEAM })).ok).toBe(true);
    const account = await accountWithKey(services, { plan: 'team', tokens: 100 });
    who = { accountId: account.accountId, keyId: account.keyId };
    calls = new ToolCalls(new ToolRegistry(TOOLS, served), services);
  });
  afterEach(async () => {
    await served.close();
    await b.close();
  });

  const call = async (name: string, args: unknown = {}, door: Door = 'http') => {
    const caller: Caller = { ...who, requestId: 'req_units', log: logger, startedAt: 0, refusal: null };
    const res = await calls.call(door, caller, name, args);
    if (!res.ok) throw new Error(`${name}: ${res.error.code} ${res.error.message}`);
    return res.json === undefined ? (res.body as any) : JSON.parse(res.json);
  };

  it("answers each call's metadata.fair_use in its own unit's windows", async () => {
    const pages = await call('fetch_pages', { n: 3 });
    expect(pages.metadata).toMatchObject({ tokens_charged: 3, tokens_remaining: 97 });
    expect(pages.metadata.fair_use).toEqual({
      pages_remaining_1h: 2,
      pages_reset_1h: '2026-04-15T14:55:29Z',
      pages_remaining_1d: 17,
      pages_reset_1d: '2026-04-16T13:55:29Z',
    });
    expect(Object.keys(pages.metadata.fair_use)).toEqual([
      'pages_remaining_1h',
      'pages_reset_1h',
      'pages_remaining_1d',
      'pages_reset_1d',
    ]);
    const people = await call('people', { n: 2 }, 'mcp');
    expect(people.metadata.fair_use).toEqual({
      records_remaining_1d: 98,
      records_reset_1d: '2026-04-16T13:55:29Z',
    });
    // get_account still summarises the plan's first category's records.
    expect((await call('get_account')).metadata.fair_use).toEqual({
      records_remaining_1d: 98,
      records_reset_1d: '2026-04-16T13:55:29Z',
    });
  });

  it("get_billing names each tool's unit", async () => {
    const billing = (await call('get_billing')).results;
    expect(billing.token_cost_details.fetch_pages).toEqual({ per_call: 0, per_record: 1, unit: 'pages' });
    expect(billing.token_cost_details.people).toEqual({ per_call: 1, per_record: 2, unit: 'records' });
    expect(billing.token_costs).toMatchObject({ fetch_pages: 1, people: 2 });
  });

  it('get_usage and the history keep pages apart from records, written or not yet', async () => {
    await call('fetch_pages', { n: 3 });
    await call('fetch_pages', { n: 1 }, 'mcp');
    await call('people', { n: 2 });
    const expected = { records: 2, units: { pages: 4 }, with_data: 3 };
    const before = (await call('get_usage')).results;
    expect(before.totals).toMatchObject({ calls: 3, ...expected });
    expect(before.days).toEqual([{ date: TODAY, ...before.totals }]);
    await b.usageCounters.flush();
    const after = (await call('get_usage', { period: 'week' })).results;
    // get_usage's own call before this one is counted too, without units.
    expect(after.totals).toMatchObject({ calls: 4, ...expected });
    expect(after.days.at(-1)).toMatchObject({ date: TODAY, ...expected });
    expect(after.days[0]).not.toHaveProperty('units');
    const history = await services.billing.history(who.accountId, { from: TODAY, to: TODAY, by: 'tool' });
    expect(history.ok && history.value.rows).toEqual([
      expect.objectContaining({ tool: 'fetch_pages', records: 0, units: { pages: 4 } }),
      expect.objectContaining({ tool: 'get_usage', records: 0 }),
      expect.objectContaining({ tool: 'people', records: 2 }),
    ]);
    expect(history.ok && history.value.rows[2]).not.toHaveProperty('units');
    expect(history.ok && history.value.totals).toMatchObject(expected);
  });
});
