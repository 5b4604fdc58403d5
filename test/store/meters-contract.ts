/**
 * Meters of the operator's own, as the Store contract on every backend: a plan's categories, units
 * and windows read back in the plan's order; any (category, unit, window) consumed by the domain's
 * reference semantics, all-or-nothing, exactly under concurrency; a limit removed stops refusing.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Account } from '../../src/domain/accounts.js';
import { applyConsumption, fairUseView, incrementsFor, type WindowState } from '../../src/domain/fair-use.js';
import { DEFAULT_PLANS, type Plan } from '../../src/domain/plans.js';
import type { Store } from '../../src/store/store.js';
import { accountRecord } from '../helpers.js';
import { seededRandom } from '../seeded-random.js';
import type { StoreFixture } from './contract-fixtures.js';

const T = Date.UTC(2026, 3, 15, 13, 55, 29) / 1000;
const DAY = 86_400;

/** Categories, units and windows in an order neither sorted nor JSONB's (shorter keys first). */
const TEAM: Plan = {
  id: 'team',
  unlimited: false,
  limits: {
    scrape: { requests: { '1h': 5 }, pages: { '1d': 20, '30m': 8 } },
    ai: { messages: { '2w': 50 } },
  },
};

/** 16 categories of 4 windows each: the most a plan may have. */
const WIDE: Plan = {
  id: 'wide',
  unlimited: false,
  limits: Object.fromEntries(
    Array.from({ length: 16 }, (_, i) => [`c${i}`, { pages: { '30m': 9, '5h': 20, '1d': 40, '1w': 80 } }]),
  ),
};

export function metersContract(name: string, makeStore: () => Promise<StoreFixture>): void {
  describe(`${name} meters of the operator's own`, () => {
    let fixture: StoreFixture;
    let store: Store;
    let acc: Account;
    beforeEach(async () => {
      fixture = await makeStore();
      store = fixture.store;
      await store.migrate(DEFAULT_PLANS, T);
      await store.plans.put(TEAM, T);
      await store.plans.put(WIDE, T);
      acc = accountRecord(T, { id: `acc_${Math.random().toString(36).slice(2, 12)}`, planId: 'team' });
      await store.accounts.create(acc);
    });
    afterEach(async () => fixture.cleanup());

    const consume = (plan: Plan, category: string, amounts: Record<string, number>, now: number) =>
      store.usage.commit({
        accountId: acc.id,
        increments: incrementsFor(plan.limits, category, amounts),
        now,
        render: () => null,
      });

    it("reads a plan's limits back in the plan's order, and the defaults in the spec's", async () => {
      expect(JSON.stringify((await store.plans.get('team'))?.limits)).toBe(JSON.stringify(TEAM.limits));
      const free = DEFAULT_PLANS.find((p) => p.id === 'free')!;
      expect(JSON.stringify((await store.plans.get('free'))?.limits)).toBe(JSON.stringify(free.limits));
      const snapshot = await store.accounts.snapshot(acc.id);
      expect(Object.keys(fairUseView(snapshot!.plan.limits, [], T))).toEqual(['scrape', 'ai']);
    });

    it('consumes any unit and window by the reference semantics, all or nothing', async () => {
      const random = seededRandom(44);
      let reference: WindowState[] = [];
      let now = T;
      const seen = { committed: 0, exceeded: 0 };
      for (let step = 0; step < 150; step++) {
        now += Math.floor(random() * 3 * 3_600);
        const category = random() < 0.7 ? 'scrape' : 'ai';
        const amounts: Record<string, number> =
          category === 'scrape'
            ? { pages: Math.floor(random() * 5), requests: 1 }
            : { messages: 1 + Math.floor(random() * 6), requests: 1 };
        const increments = incrementsFor(TEAM.limits, category, amounts);
        const expected = applyConsumption(reference, increments, now);
        const outcome = await consume(TEAM, category, amounts, now);
        if (expected.ok) {
          expect(outcome.kind, `step ${step}`).toBe('committed');
          reference = expected.states;
          seen.committed++;
        } else {
          expect(outcome, `step ${step}`).toEqual({ kind: 'exceeded', exceeded: expected.exceeded });
          seen.exceeded++;
        }
        const stored = (await store.accounts.snapshot(acc.id))!.windows;
        expect(fairUseView(TEAM.limits, stored, now), `step ${step}`).toEqual(
          fairUseView(TEAM.limits, reference, now),
        );
      }
      expect(seen.committed).toBeGreaterThan(30);
      expect(seen.exceeded).toBeGreaterThan(10);
    });

    it('grants exactly the limit of a custom window to concurrent consumptions', async () => {
      const outcomes = await Promise.all(
        Array.from({ length: 30 }, () => consume(TEAM, 'scrape', { pages: 1 }, T)),
      );
      expect(outcomes.filter((o) => o.kind === 'committed')).toHaveLength(8);
      const windows = (await store.accounts.snapshot(acc.id))!.windows;
      expect(windows.find((w) => w.window === '30m')).toMatchObject({ used: 8, endsAt: T + 1_800 });
      expect(windows.find((w) => w.window === '1d')).toMatchObject({ used: 8, endsAt: T + DAY });
    });

    it('stops refusing a window once the plan no longer limits it, and keeps the rest', async () => {
      expect((await consume(TEAM, 'scrape', { pages: 8 }, T)).kind).toBe('committed');
      expect((await consume(TEAM, 'scrape', { pages: 1 }, T + 1)).kind).toBe('exceeded');
      const lifted: Plan = { ...TEAM, limits: { ...TEAM.limits, scrape: { pages: { '1d': 20 } } } };
      await store.plans.put(lifted, T + 2);
      const snapshot = await store.accounts.snapshot(acc.id);
      expect(snapshot?.plan.limits.scrape).toEqual({ pages: { '1d': 20 } });
      expect((await consume(lifted, 'scrape', { pages: 12 }, T + 3)).kind).toBe('committed');
      expect(await consume(lifted, 'scrape', { pages: 1 }, T + 4)).toMatchObject({
        kind: 'exceeded',
        exceeded: { slot: { category: 'scrape', unit: 'pages', window: '1d' }, used: 20 },
      });
    });

    it('records a fair_use.threshold event for a window of its own, once per crossing', async () => {
      const withThresholds = (amount: number, now: number) =>
        store.usage.commit({
          accountId: acc.id,
          increments: incrementsFor(TEAM.limits, 'scrape', { pages: amount }),
          now,
          render: () => null,
          thresholds: [50, 100],
        });
      for (const [amount, now] of [
        [3, T],
        [1, T + 60],
        [4, T + 120],
      ] as const)
        expect((await withThresholds(amount, now)).kind).toBe('committed');
      const got = await store.webhooks.events({ limit: 50 });
      expect(
        got.map((e) => [e.data.unit, e.data.window, e.data.threshold, e.data.used, e.data.resets_at]),
      ).toEqual([
        ['pages', '30m', 50, 4, '2026-04-15T14:25:29Z'],
        ['pages', '30m', 100, 8, '2026-04-15T14:25:29Z'],
      ]);
      expect(got[0]!.data).toMatchObject({ category: 'scrape', limit: 8, remaining: 4 });
    });

    it('keeps 16 categories of 4 windows each apart', async () => {
      await store.accounts.update(acc.id, { planId: 'wide' }, T);
      for (let i = 0; i < 16; i++)
        expect((await consume(WIDE, `c${i}`, { pages: (i % 9) + 1 }, T)).kind).toBe('committed');
      const windows = (await store.accounts.snapshot(acc.id))!.windows;
      expect(windows).toHaveLength(64);
      const view = fairUseView(WIDE.limits, windows, T) as unknown as Record<
        string,
        Record<string, Record<string, { used: number }>>
      >;
      for (let i = 0; i < 16; i++) expect(view[`c${i}`]!.pages!['1w']!.used).toBe((i % 9) + 1);
    });
  });
}
