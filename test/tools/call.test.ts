/**
 * ToolCalls, the one tool call both doors make, called directly (no HTTP, no MCP) on a real store:
 * SQLite, and PostgreSQL too. What a call answers, what it refuses and with which status, what it
 * charges in the ledger and spends of fair use, and how the usage counters count it, by door.
 */
import Type from 'typebox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/domain/api-error.js';
import { FixedClock } from '../../src/domain/clock.js';
import { DEFAULT_PLANS } from '../../src/domain/plans.js';
import { createServices, type Services } from '../../src/service/index.js';
import { UsageCounters } from '../../src/service/usage-counters.js';
import { withReadCache } from '../../src/store/cached-reads.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { Store } from '../../src/store/store.js';
import { type Called, type Caller, type Door, ToolCalls, UNKNOWN_TOOL } from '../../src/tools/call.js';
import { TOOLS } from '../../src/tools/index.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import type { DataTool } from '../../src/tools/tool.js';
import { accountOnPlan, accountWithKey, captureLogs, KEY_SECRET, scratchServices, T0 } from '../helpers.js';
import { POSTGRES_URL, postgresAvailable, scratchSchemaName } from '../postgres.js';

const TODAY = '2026-04-15';

/** A store with its services and usage counters, on one backend. */
interface Backed {
  store: Store;
  clock: FixedClock;
  services: Services;
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
  const services = createServices({
    store,
    reads,
    clock,
    keyPrefix: 'tg',
    keySecret: KEY_SECRET,
    usageCounters,
  });
  return {
    store,
    clock,
    services,
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

/** An enrich tool returning `count` records at 1 token each; it throws on `fail`, and counts its runs. */
function enrichTool() {
  const runs = { count: 0 };
  const tool: DataTool = {
    kind: 'data',
    name: 'test_enrich',
    summary: 'test only',
    description: 'returns `count` records',
    args: Type.Object(
      {
        count: Type.Integer({ minimum: 0 }),
        fail: Type.Optional(Type.Boolean()),
        records: Type.Optional(Type.Number()),
      },
      { additionalProperties: false },
    ),
    results: Type.Object({ records: Type.Array(Type.Integer()) }),
    metered: {
      category: 'enrich',
      expectedRecords: (args) => (args as { count: number }).count,
      tokenCost: (_args, records) => records,
    },
    async run(_ctx, args) {
      runs.count++;
      const a = args as { count: number; fail?: boolean; records?: number };
      if (a.fail) throw new Error('upstream broke');
      if (a.count === 0) return { results: { records: [] }, records: 0, missed: true, httpStatus: 404 };
      return {
        results: { records: Array.from({ length: a.count }, (_, i) => i) },
        records: a.records ?? a.count,
      };
    },
  };
  return { tool, runs };
}

describe.each(BACKENDS)('ToolCalls on $name', ({ make }) => {
  let b: Backed;
  let calls: ToolCalls;
  let runs: { count: number };
  const { logger } = captureLogs('silent');

  beforeEach(async () => {
    b = await make();
    const enrich = enrichTool();
    runs = enrich.runs;
    calls = new ToolCalls(new ToolRegistry([...TOOLS, enrich.tool], undefined), b.services);
  });
  afterEach(async () => b.close());

  const caller = (who: { accountId: string; keyId: string }, refusal: ApiError | null = null): Caller => ({
    accountId: who.accountId,
    keyId: who.keyId,
    requestId: 'req_test',
    log: logger,
    startedAt: 0,
    refusal,
  });
  const call = async (
    who: { accountId: string; keyId: string },
    name: string,
    args: unknown,
    door: Door = 'http',
  ): Promise<Called> => calls.call(door, caller(who), name, args);
  /** The counts of today not yet written, by tool. */
  const counted = (accountId: string) =>
    Object.fromEntries(
      b.usageCounters.unwritten(accountId, TODAY, TODAY, 'tool').map(({ group, ...c }) => [group, c]),
    );
  const balance = async (accountId: string) => (await b.store.accounts.get(accountId))?.tokenBalance;
  const charges = async (accountId: string) =>
    (await b.store.ledger.list(accountId, { limit: 100 })).filter((e) => e.kind === 'charge');

  it("get_account answers the caller's own account, through either door, counted under each", async () => {
    const acme = await accountWithKey(b.services, { name: 'Acme', tokens: 40 });
    const other = await accountWithKey(b.services, { name: 'Other', tokens: 1 });
    const http = await call(acme, 'get_account', {});
    expect(http.ok).toBe(true);
    if (!http.ok) return;
    expect(http.status).toBe(200);
    const body = JSON.parse(http.json ?? JSON.stringify(http.body));
    expect(body.status).toBe('ok');
    expect(body.results).toMatchObject({ id: acme.accountId, name: 'Acme', token_balance: 40 });
    const mcp = await call(other, 'get_account', {}, 'mcp');
    expect(mcp.ok && JSON.parse(mcp.json ?? JSON.stringify(mcp.body)).results.id).toBe(other.accountId);
    expect(counted(acme.accountId).get_account).toMatchObject({ calls: 1, failed: 0, tokens: 0 });
    expect(counted(other.accountId).get_account).toMatchObject({ calls: 1, failed: 0 });
    // Written, the counts are the store's.
    await b.usageCounters.flush();
    const written = await b.store.usageHistory.history(acme.accountId, TODAY, TODAY, 'tool');
    expect(written).toEqual([expect.objectContaining({ group: 'get_account', calls: 1, failed: 0 })]);
  });

  it('a metered hit answers its envelope, charges its tokens in the ledger and spends fair use', async () => {
    const acme = await accountWithKey(b.services, { tokens: 100 });
    const res = await call(acme, 'test_enrich', { count: 3 }, 'mcp');
    expect(res).toMatchObject({ ok: true, status: 200 });
    if (!res.ok) return;
    expect(res.body).toMatchObject({
      results: { records: [0, 1, 2] },
      status: 'ok',
      metadata: { tokens_charged: 3, tokens_remaining: 97, fair_use: { records_remaining_5h: 97 } },
    });
    expect(await balance(acme.accountId)).toBe(97);
    expect(await charges(acme.accountId)).toEqual([
      expect.objectContaining({ amount: 3, delta: -3, balanceAfter: 97, reason: 'test_enrich' }),
    ]);
    const snapshot = await b.store.accounts.snapshot(acme.accountId);
    const used = Object.fromEntries(
      snapshot!.windows.filter((w) => w.category === 'enrich').map((w) => [`${w.unit}.${w.window}`, w.used]),
    );
    expect(used).toMatchObject({ 'records.5h': 3, 'records.1w': 3, 'requests.5h': 1 });
    expect(counted(acme.accountId).test_enrich).toMatchObject({
      calls: 1,
      records: 3,
      tokens: 3,
      withData: 1,
      failed: 0,
    });
  });

  it('a miss the tool answers 404 is a 404 not_found envelope: the request counted, nothing charged', async () => {
    const acme = await accountWithKey(b.services, { tokens: 10 });
    const res = await call(acme, 'test_enrich', { count: 0 });
    expect(res).toMatchObject({ ok: true, status: 404, body: { status: 'not_found' } });
    expect(await balance(acme.accountId)).toBe(10);
    expect(await charges(acme.accountId)).toEqual([]);
    expect(counted(acme.accountId).test_enrich).toMatchObject({ calls: 1, withoutData: 1, tokens: 0 });
  });

  it('a quota the call would pass is refused 429 before the tool runs, nothing spent', async () => {
    const accountId = await accountOnPlan(b.services, { records5h: 2, records1w: 10, requests5h: 10 });
    const key = await b.services.keys.create(accountId, 'test');
    if (!key.ok) throw new Error(key.error.message);
    const granted = await b.services.tokens.apply(accountId, { kind: 'grant', amount: 50 });
    expect(granted.ok).toBe(true);
    const who = { accountId, keyId: key.value.id };
    const before = await balance(accountId);
    const res = await call(who, 'test_enrich', { count: 3 });
    expect(res.ok).toBe(false);
    if (res.ok) return;
    expect(res.status).toBe(429);
    expect(res.error.code).toBe('fair_use_exceeded');
    expect(runs.count).toBe(0);
    expect(await balance(accountId)).toBe(before);
    expect(await charges(accountId)).toEqual([]);
    expect(counted(accountId).test_enrich).toMatchObject({ calls: 1, failed: 1 });
    // Within the quota, the same tool answers.
    expect((await call(who, 'test_enrich', { count: 2 })).status).toBe(200);
  });

  it('too few tokens is 402 insufficient_tokens before the tool runs, the balance kept', async () => {
    const acme = await accountWithKey(b.services, { tokens: 2 });
    const res = await call(acme, 'test_enrich', { count: 3 });
    expect(res).toMatchObject({ ok: false, status: 402 });
    expect(!res.ok && res.error.code).toBe('insufficient_tokens');
    expect(runs.count).toBe(0);
    expect(await balance(acme.accountId)).toBe(2);
  });

  it('a suspended account is refused 403 by a data tool, yet reads its own account', async () => {
    const acme = await accountWithKey(b.services, { tokens: 10 });
    await b.services.accounts.update(acme.accountId, { status: 'suspended' });
    const res = await call(acme, 'test_enrich', { count: 1 });
    expect(res).toMatchObject({ ok: false, status: 403 });
    expect(!res.ok && res.error.code).toBe('account_suspended');
    expect(runs.count).toBe(0);
    expect((await call(acme, 'get_account', {})).status).toBe(200);
  });

  it('a tool that fails answers 500 and charges nothing; a record count that is not a count is 502', async () => {
    const acme = await accountWithKey(b.services, { tokens: 10 });
    const failed = await call(acme, 'test_enrich', { count: 2, fail: true });
    expect(failed).toMatchObject({ ok: false, status: 500 });
    expect(!failed.ok && failed.error.code).toBe('internal_error');
    const fractional = await call(acme, 'test_enrich', { count: 2, records: 1.5 });
    expect(fractional).toMatchObject({ ok: false, status: 502 });
    expect(!fractional.ok && fractional.error.code).toBe('upstream_error');
    expect(runs.count).toBe(2);
    expect(await balance(acme.accountId)).toBe(10);
    expect(await charges(acme.accountId)).toEqual([]);
    expect(counted(acme.accountId).test_enrich).toMatchObject({ calls: 2, failed: 2, tokens: 0 });
  });

  it('arguments that are not an object, or fail the schema, are 400 invalid_arguments, the tool not run', async () => {
    const acme = await accountWithKey(b.services, { tokens: 10 });
    for (const args of [null, [], 'x', { count: -1 }, { count: 1, extra: true }]) {
      const res = await call(acme, 'test_enrich', args);
      expect(res, JSON.stringify(args)).toMatchObject({ ok: false, status: 400 });
      expect(!res.ok && res.error.code).toBe('invalid_arguments');
    }
    expect(runs.count).toBe(0);
    expect(await balance(acme.accountId)).toBe(10);
  });

  it('an unknown tool is 404 unknown_tool, counted under (unknown)', async () => {
    const acme = await accountWithKey(b.services);
    const res = await call(acme, 'no_such_tool', {});
    expect(res).toMatchObject({ ok: false, status: 404 });
    expect(!res.ok && res.error.code).toBe('unknown_tool');
    expect(counted(acme.accountId)).toEqual({
      [UNKNOWN_TOOL]: expect.objectContaining({ calls: 1, failed: 1 }),
    });
  });

  it("the door's refusal is answered first, before the tool is found or run", async () => {
    const acme = await accountWithKey(b.services, { tokens: 10 });
    for (const name of ['test_enrich', 'no_such_tool']) {
      const res = await calls.call('http', caller(acme, new ApiError('rate_limited')), name, { count: 1 });
      expect(res).toMatchObject({ ok: false, status: 429 });
      expect(!res.ok && res.error.code).toBe('rate_limited');
    }
    expect(runs.count).toBe(0);
    expect(await balance(acme.accountId)).toBe(10);
  });
});
