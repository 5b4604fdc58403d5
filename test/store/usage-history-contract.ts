/**
 * The usage rollup's and billing periods' part of the Store contract, run on every backend:
 * additive upserts that add up under concurrency, summed reads by day, key and tool over inclusive
 * ranges, the hours of a day written with the days (both or neither), amounts of other units than
 * records kept apart by unit, pruning; a plan's subscription and an account's plan_since.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Account } from '../../src/domain/accounts.js';
import { DEFAULT_PLANS } from '../../src/domain/plans.js';
import { type UsageRow, zeroCounts } from '../../src/domain/usage-history.js';
import type { HourRow } from '../../src/domain/usage-hours.js';
import type { Store } from '../../src/store/store.js';
import { accountRecord } from '../helpers.js';
import type { StoreFixture } from './contract-fixtures.js';

const T = Date.UTC(2026, 3, 15, 13, 55, 29) / 1000;

const hour = (over: Partial<HourRow>): HourRow => ({
  accountId: 'acc_a',
  day: '2026-04-15',
  hour: 13,
  calls: 1,
  tokens: 0,
  failed: 0,
  ...over,
});

const row = (over: Partial<UsageRow>): UsageRow => ({
  accountId: 'acc_a',
  day: '2026-04-15',
  keyId: 'key_1',
  tool: 'search_people',
  surface: 'http',
  ...zeroCounts(),
  calls: 1,
  ...over,
});

export function usageHistoryContract(name: string, makeStore: () => Promise<StoreFixture>): void {
  describe(`${name} usage history and billing periods`, () => {
    let fixture: StoreFixture;
    let store: Store;
    beforeEach(async () => {
      fixture = await makeStore();
      store = fixture.store;
      await store.migrate(DEFAULT_PLANS, T);
    });
    afterEach(async () => fixture.cleanup());

    it('adds counts to the same row, and sums rows by day, key or tool over an inclusive range', async () => {
      await store.usageHistory.add([
        row({ calls: 2, tokens: 10, records: 5, withData: 2 }),
        row({ surface: 'mcp', calls: 1, failed: 1 }),
        row({ keyId: 'key_2', tool: 'get_account', calls: 3, withoutData: 3 }),
        row({ day: '2026-04-16', calls: 4, records: 8, withData: 4, tokens: 8 }),
        row({ day: '2026-04-18', calls: 9 }),
        row({ accountId: 'acc_b', calls: 100 }),
      ]);
      await store.usageHistory.add([row({ calls: 1, tokens: 1, records: 1, withData: 1 })]);

      const byDay = await store.usageHistory.history('acc_a', '2026-04-15', '2026-04-16', 'day');
      expect(byDay).toEqual([
        { group: '2026-04-15', calls: 7, tokens: 11, records: 6, withData: 3, withoutData: 3, failed: 1 },
        { group: '2026-04-16', calls: 4, tokens: 8, records: 8, withData: 4, withoutData: 0, failed: 0 },
      ]);
      const byKey = await store.usageHistory.history('acc_a', '2026-04-01', '2026-04-30', 'key');
      expect(byKey.map((g) => [g.group, g.calls])).toEqual([
        ['key_1', 17],
        ['key_2', 3],
      ]);
      const byTool = await store.usageHistory.history('acc_a', '2026-04-15', '2026-04-15', 'tool');
      expect(byTool.map((g) => [g.group, g.calls])).toEqual([
        ['get_account', 3],
        ['search_people', 4],
      ]);
      expect(await store.usageHistory.history('acc_none', '2026-04-01', '2026-04-30', 'day')).toEqual([]);
    });

    it('keeps amounts of other units apart from records, summed by unit, and absent where none', async () => {
      await store.usageHistory.add([
        row({ tool: 'fetch_pages', calls: 2, withData: 2, units: { pages: 7 } }),
        row({ tool: 'fetch_pages', surface: 'mcp', units: { pages: 3 } }),
        row({ tool: 'send_mail', keyId: 'key_2', units: { messages: 4, pages: 1 } }),
        row({ records: 5, withData: 1 }),
        row({ day: '2026-04-16', tool: 'fetch_pages', units: { pages: 2 } }),
        row({ day: '2026-04-17' }),
      ]);
      await store.usageHistory.add([row({ tool: 'fetch_pages', units: { pages: 10 } })]);

      const byDay = await store.usageHistory.history('acc_a', '2026-04-15', '2026-04-17', 'day');
      expect(byDay).toEqual([
        {
          group: '2026-04-15',
          calls: 6,
          tokens: 0,
          records: 5,
          units: { messages: 4, pages: 21 },
          withData: 3,
          withoutData: 0,
          failed: 0,
        },
        expect.objectContaining({ group: '2026-04-16', records: 0, units: { pages: 2 } }),
        expect.objectContaining({ group: '2026-04-17', calls: 1 }),
      ]);
      expect(byDay[2]?.units).toBeUndefined();
      // Units in their order, whichever came first.
      expect(Object.keys(byDay[0]!.units!)).toEqual(['messages', 'pages']);
      const byTool = await store.usageHistory.history('acc_a', '2026-04-15', '2026-04-16', 'tool');
      expect(byTool.map((g) => [g.group, g.records, g.units])).toEqual([
        ['fetch_pages', 0, { pages: 22 }],
        ['search_people', 5, undefined],
        ['send_mail', 0, { messages: 4, pages: 1 }],
      ]);
      const byKey = await store.usageHistory.history('acc_a', '2026-04-15', '2026-04-15', 'key');
      expect(byKey.map((g) => [g.group, g.units])).toEqual([
        ['key_1', { pages: 20 }],
        ['key_2', { messages: 4, pages: 1 }],
      ]);
      // Written with the hours in one statement, or not at all.
      await store.usageHistory.add([row({ day: '2026-04-17', units: { pages: 5 } })], [hour({ calls: 1 })]);
      await expect(
        store.usageHistory.add([row({ day: '2026-04-17', units: { pages: 99 } })], [hour({ hour: 24 })]),
      ).rejects.toThrow();
      expect((await store.usageHistory.history('acc_a', '2026-04-17', '2026-04-17', 'day'))[0]).toMatchObject(
        { calls: 2, units: { pages: 5 } },
      );
      expect(await store.usageHistory.hours('acc_a', '2026-04-15')).toEqual([
        expect.objectContaining({ calls: 1 }),
      ]);
      // Pruned with their day.
      expect(await store.usageHistory.prune('2026-04-16')).toBe(4);
      const left = await store.usageHistory.history('acc_a', '2000-01-01', '2100-01-01', 'day');
      expect(left.map((g) => [g.group, g.units])).toEqual([
        ['2026-04-16', { pages: 2 }],
        ['2026-04-17', { pages: 5 }],
      ]);
    });

    it('concurrent adds of the same row add up exactly', async () => {
      await Promise.all(
        Array.from({ length: 25 }, () =>
          store.usageHistory.add([
            row({ calls: 2, tokens: 3 }),
            row({ keyId: 'k2' }),
            row({ tool: 'fetch_pages', units: { pages: 2 } }),
          ]),
        ),
      );
      const [total] = await store.usageHistory.history('acc_a', '2026-04-15', '2026-04-15', 'day');
      expect(total).toMatchObject({ calls: 100, tokens: 75, units: { pages: 50 } });
    });

    it('adds the hours of a day with the days, reads one day of an account by the hour, and prunes hours apart', async () => {
      await store.usageHistory.add(
        [row({ calls: 3 })],
        [
          hour({ hour: 13, calls: 2, tokens: 5 }),
          hour({ hour: 0, calls: 1, failed: 1 }),
          hour({ accountId: 'acc_b', calls: 9 }),
          hour({ day: '2026-04-14', hour: 23, calls: 4 }),
        ],
      );
      // Hours alone (a flush whose day rows were written before) and concurrent adds add up too.
      await Promise.all(
        Array.from({ length: 10 }, () =>
          store.usageHistory.add([], [hour({ hour: 13, calls: 1, tokens: 1 })]),
        ),
      );
      expect(await store.usageHistory.hours('acc_a', '2026-04-15')).toEqual([
        { hour: 0, calls: 1, tokens: 0, failed: 1 },
        { hour: 13, calls: 12, tokens: 15, failed: 0 },
      ]);
      expect(await store.usageHistory.hours('acc_a', '2026-04-16')).toEqual([]);
      expect((await store.usageHistory.history('acc_a', '2026-04-15', '2026-04-15', 'day'))[0]?.calls).toBe(
        3,
      );
      expect(await store.usageHistory.pruneHours('2026-04-15')).toBe(1);
      expect(await store.usageHistory.hours('acc_a', '2026-04-14')).toEqual([]);
      expect((await store.usageHistory.hours('acc_a', '2026-04-15')).length).toBe(2);
      // The days are kept for their own retention.
      expect(await store.usageHistory.prune('2026-04-15')).toBe(0);
    });

    it('writes a flush whose hours are refused, days included, not at all', async () => {
      // An hour the table refuses (24 is no hour): the days of the same add are not written either,
      // so that the flush kept and retried counts nothing twice.
      await expect(store.usageHistory.add([row({ calls: 5 })], [hour({ hour: 24 })])).rejects.toThrow();
      expect(await store.usageHistory.history('acc_a', '2026-04-15', '2026-04-15', 'day')).toEqual([]);
    });

    it('prunes the days before a day', async () => {
      await store.usageHistory.add([
        row({ day: '2025-01-01' }),
        row({ day: '2026-04-14' }),
        row({ day: '2026-04-15' }),
      ]);
      expect(await store.usageHistory.prune('2026-04-15')).toBe(2);
      const left = await store.usageHistory.history('acc_a', '2000-01-01', '2100-01-01', 'day');
      expect(left.map((g) => g.group)).toEqual(['2026-04-15']);
    });

    it("keeps a plan's subscription, and the default subscription plans are monthly", async () => {
      expect((await store.plans.get('subscription_27'))?.subscription).toBe('monthly');
      expect((await store.plans.get('free'))?.subscription).toBeUndefined();
      const free = (await store.plans.get('free'))!;
      await store.plans.put({ ...free, id: 'monthly_x', subscription: 'monthly' }, T);
      expect((await store.plans.list()).find((p) => p.id === 'monthly_x')?.subscription).toBe('monthly');
    });

    it("moves an account's plan_since when, and only when, its plan changes", async () => {
      const account: Account = accountRecord(T);
      await store.accounts.create(account);
      expect(
        (await store.accounts.update(account.id, { name: 'Other', planId: 'free' }, T + 10))?.planSince,
      ).toBe(T);
      expect(
        (await store.accounts.update(account.id, { planId: 'subscription_27' }, T + 20))?.planSince,
      ).toBe(T + 20);
      const snapshot = await store.accounts.snapshot(account.id);
      expect(snapshot?.account.planSince).toBe(T + 20);
      expect(snapshot?.plan.subscription).toBe('monthly');
    });
  });
}
