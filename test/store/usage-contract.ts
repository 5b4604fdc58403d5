/** The usage commits part of the Store contract (store.usage.commit), run on every backend. */
import { beforeEach, describe, expect, it } from 'vitest';
import type { Account } from '../../src/domain/accounts.js';
import { FixedClock, nowSeconds } from '../../src/domain/clock.js';
import {
  type Amounts,
  applyConsumption,
  fairUseMetadata,
  fairUseView,
  incrementsFor,
  type WindowState,
} from '../../src/domain/fair-use.js';
import { CATEGORIES, type Category, type PlanLimits } from '../../src/domain/plans.js';
import type { Store, UsageCommit } from '../../src/store/store.js';
import { seededRandom } from '../seeded-random.js';
import {
  account,
  eachMigratedStore,
  H5,
  id,
  ledger,
  type StoreFixture,
  T,
  TINIER,
  TINY,
  W1,
} from './contract-fixtures.js';

export function usageContract(name: string, makeStore: () => Promise<StoreFixture>): void {
  describe(`${name} store contract`, () => {
    let store: Store;
    eachMigratedStore(makeStore, (s) => {
      store = s;
    });

    describe('usage commits', () => {
      let acc: Account;
      beforeEach(async () => {
        acc = account({ planId: 'tiny' });
        await store.accounts.create(acc);
      });

      const commit = (
        category: Category,
        amounts: Amounts,
        now: number,
        extra: Partial<UsageCommit> = {},
        planLimits: PlanLimits = TINY.limits,
      ) =>
        store.usage.commit({
          accountId: acc.id,
          increments: incrementsFor(planLimits, category, amounts),
          now,
          render: (windows, balanceAfter) => ({ windows, balanceAfter }),
          ...extra,
        });
      const windows = async () => (await store.accounts.snapshot(acc.id))?.windows ?? [];
      const bySlot = (ws: WindowState[]) =>
        [...ws].sort((a, b) =>
          `${a.category}.${a.unit}.${a.window}`.localeCompare(`${b.category}.${b.unit}.${b.window}`),
        );

      it('matches the domain reference over a few hundred random consumptions across 5h and 1w ends', async () => {
        for (const seed of [1, 2, 3]) {
          const other = account({ planId: 'tiny' });
          await store.accounts.create(other);
          const random = seededRandom(seed);
          const pick = <X>(xs: readonly X[]): X => xs[Math.floor(random() * xs.length)]!;
          const clock = new FixedClock(T * 1000);
          let plan = TINY;
          let reference: WindowState[] = [];
          const seen = { committed: 0, exceeded: 0, atExactEnd: 0, planSwitches: 0, restarted1w: 0 };

          for (let step = 0; step < 300; step++) {
            const now0 = nowSeconds(clock);
            const running = reference.filter((w) => w.endsAt > now0);
            const r = random();
            if (r < 0.15 && running.length > 0) {
              // Land on a window's end, or a second either side of it.
              clock.set((pick(running).endsAt + pick([-1, 0, 0, 1])) * 1000);
            } else if (r < 0.65) clock.advance(Math.floor(random() * 1_800));
            else if (r < 0.9) clock.advance(3_600 + Math.floor(random() * 5 * 3_600));
            else clock.advance(86_400 + Math.floor(random() * 2 * 86_400));
            const now = nowSeconds(clock);
            if (reference.some((w) => w.endsAt === now)) seen.atExactEnd++;

            if (random() < 0.05) {
              plan = plan === TINY ? TINIER : TINY;
              await store.accounts.update(other.id, { planId: plan.id }, now);
              seen.planSwitches++;
            }

            const category = pick(CATEGORIES);
            const requests = pick([0, 1, 1, 1, 2]);
            const records = random() < 0.1 ? 0 : Math.floor(random() * 13) + (requests === 0 ? 1 : 0);
            const increments = incrementsFor(plan.limits, category, { records, requests });
            const expected = applyConsumption(reference, increments, now);
            const outcome = await store.usage.commit({
              accountId: other.id,
              increments,
              now,
              render: () => null,
            });
            const where = `seed ${seed}, step ${step}, t+${now - T}s, ${category} ${records}/${requests}`;
            if (expected.ok) {
              expect(outcome.kind, where).toBe('committed');
              const before1w = reference.find((w) => w.category === category && w.window === '1w');
              const after1w = expected.states.find((w) => w.category === category && w.window === '1w');
              if (before1w && after1w && before1w.startedAt !== after1w.startedAt) seen.restarted1w++;
              reference = expected.states;
              seen.committed++;
            } else {
              expect(outcome, where).toEqual({ kind: 'exceeded', exceeded: expected.exceeded });
              seen.exceeded++;
            }

            const snapshot = await store.accounts.snapshot(other.id);
            expect(snapshot?.plan.id, where).toBe(plan.id);
            const stored = snapshot?.windows ?? [];
            expect(fairUseView(plan.limits, stored, now), where).toEqual(
              fairUseView(plan.limits, reference, now),
            );
            for (const c of CATEGORIES) {
              expect(fairUseMetadata(plan.limits, stored, c, now), where).toEqual(
                fairUseMetadata(plan.limits, reference, c, now),
              );
            }
            // And as the windows will look a little later, before anything else happens.
            const later = now + pick([1, 600, H5 - 1, H5, W1]);
            expect(fairUseView(plan.limits, stored, later), where).toEqual(
              fairUseView(plan.limits, reference, later),
            );
          }

          // The run must have met what it is meant to test.
          expect(seen.committed).toBeGreaterThan(50);
          expect(seen.exceeded).toBeGreaterThan(20);
          expect(seen.atExactEnd).toBeGreaterThan(5);
          expect(seen.restarted1w).toBeGreaterThan(1);
          expect(seen.planSwitches).toBeGreaterThan(1);
        }
      });

      it('starts the windows at the first consumption and leaves their ends alone after', async () => {
        await commit('enrich', { records: 7, requests: 1 }, T);
        await commit('enrich', { records: 2, requests: 1 }, T + 100);
        expect(bySlot(await windows())).toEqual([
          { category: 'enrich', unit: 'records', window: '1w', startedAt: T, endsAt: T + W1, used: 9 },
          { category: 'enrich', unit: 'records', window: '5h', startedAt: T, endsAt: T + H5, used: 9 },
          { category: 'enrich', unit: 'requests', window: '5h', startedAt: T, endsAt: T + H5, used: 2 },
        ]);
      });

      it('decides consumptions made together each on the windows the ones before it left', async () => {
        // Made in one turn of the event loop: SQLite writes them in one group commit, with the
        // account's windows cached (read once before).
        await commit('enrich', { records: 1, requests: 0 }, T);
        expect((await store.accounts.snapshot(acc.id))?.windows).toHaveLength(2);
        const outcomes = await Promise.all(
          [1, 2, 3, 4].map(() => commit('enrich', { records: 6, requests: 1 }, T)),
        );
        expect(outcomes.filter((o) => o.kind === 'committed')).toHaveLength(3);
        expect(outcomes.filter((o) => o.kind === 'exceeded')).toEqual([
          {
            kind: 'exceeded',
            exceeded: {
              slot: { category: 'enrich', unit: 'records', window: '5h' },
              limit: 20,
              used: 19,
              resetsAt: T + H5,
            },
          },
        ]);
        expect(bySlot(await windows()).map((w) => w.used)).toEqual([19, 19, 3]);
      });

      it('starts a new window with a consumption made at exactly the end of the last one', async () => {
        await commit('enrich', { records: 20, requests: 1 }, T);
        const outcome = await commit('enrich', { records: 20, requests: 1 }, T + H5);
        expect(outcome.kind).toBe('committed');
        const h5 = (await windows()).find((w) => w.unit === 'records' && w.window === '5h');
        expect(h5).toMatchObject({ startedAt: T + H5, endsAt: T + 2 * H5, used: 20 });
      });

      it('refuses all-or-nothing: nothing of a refused consumption is kept, and the window is named', async () => {
        // records.1w fills to 50 over three 5h windows; the fourth consumption fits records.5h and
        // requests.5h but not records.1w.
        await commit('enrich', { records: 20, requests: 1 }, T);
        await commit('enrich', { records: 20, requests: 1 }, T + H5);
        await commit('enrich', { records: 5, requests: 1 }, T + 2 * H5);
        const before = bySlot(await windows());
        const outcome = await commit('enrich', { records: 6, requests: 1 }, T + 2 * H5 + 10);
        expect(outcome).toEqual({
          kind: 'exceeded',
          exceeded: {
            slot: { category: 'enrich', unit: 'records', window: '1w' },
            limit: 50,
            used: 45,
            resetsAt: T + W1,
          },
        });
        expect(bySlot(await windows())).toEqual(before);
      });

      it('keeps nothing of a refused consumption that would have restarted an ended window', async () => {
        await commit('enrich', { records: 20, requests: 1 }, T);
        await commit('enrich', { records: 20, requests: 1 }, T + H5);
        const before = bySlot(await windows());
        // At 2 x 5h the 5h windows have ended; restarting them must be undone when records.1w refuses.
        const outcome = await commit('enrich', { records: 11, requests: 1 }, T + 2 * H5);
        expect(outcome.kind === 'exceeded' && outcome.exceeded.slot.window).toBe('1w');
        expect(bySlot(await windows())).toEqual(before);
      });

      it('refuses an amount above the limit of a fresh window with no reset time', async () => {
        expect(await commit('search', { records: 11, requests: 1 }, T)).toEqual({
          kind: 'exceeded',
          exceeded: {
            slot: { category: 'search', unit: 'records', window: '5h' },
            limit: 10,
            used: 0,
            resetsAt: null,
          },
        });
        expect(await windows()).toEqual([]);
      });

      it('charges tokens in the same commit and hands the balance to render', async () => {
        await store.ledger.append(ledger(acc.id, 'grant', 10));
        const entryId = id('led');
        const outcome = await commit('enrich', { records: 3, requests: 1 }, T, {
          charge: { entryId, amount: 4, reason: 'enrich' },
        });
        expect(outcome).toMatchObject({ kind: 'committed', response: { balanceAfter: 6 } });
        expect((await store.accounts.get(acc.id))?.tokenBalance).toBe(6);
        const entries = await store.ledger.list(acc.id, { limit: 10 });
        expect(entries.at(-1)).toMatchObject({
          id: entryId,
          kind: 'charge',
          amount: 4,
          delta: -4,
          balanceAfter: 6,
        });
      });

      it('rolls the windows back when the charge does not fit', async () => {
        await store.ledger.append(ledger(acc.id, 'grant', 5));
        await commit('enrich', { records: 1, requests: 1 }, T);
        const before = bySlot(await windows());
        const outcome = await commit('enrich', { records: 3, requests: 1 }, T + 1, {
          charge: { entryId: id('led'), amount: 6, reason: null },
        });
        expect(outcome).toEqual({ kind: 'insufficient', balance: 5 });
        expect(bySlot(await windows())).toEqual(before);
        expect((await store.accounts.get(acc.id))?.tokenBalance).toBe(5);
        expect(await store.ledger.list(acc.id, { limit: 10 })).toHaveLength(1);
      });

      it('renders from the windows after the consumption', async () => {
        const outcome = await commit('search', { records: 4, requests: 1 }, T);
        expect(outcome.kind).toBe('committed');
        const rendered =
          outcome.kind === 'committed' ? (outcome.response as { windows: WindowState[] }) : null;
        expect(bySlot(rendered?.windows ?? [])).toEqual(bySlot(await windows()));
        expect(rendered?.windows.find((w) => w.unit === 'records' && w.window === '5h')?.used).toBe(4);
      });

      it('replays the stored response for the same idempotency key and request, counting once', async () => {
        const idempotency = { key: 'use-1', requestHash: 'h1' };
        const first = await commit('enrich', { records: 5, requests: 1 }, T, { idempotency });
        expect(first.kind).toBe('committed');
        let renders = 0;
        const again = await commit('enrich', { records: 5, requests: 1 }, T + 60, {
          idempotency,
          render: () => {
            renders++;
            return 'fresh';
          },
        });
        expect(again).toEqual({
          kind: 'replayed',
          response: first.kind === 'committed' ? first.response : null,
        });
        expect(renders).toBe(0);
        expect((await windows()).find((w) => w.unit === 'records' && w.window === '5h')?.used).toBe(5);
      });

      it('replays the stored response byte for byte, member order included', async () => {
        const idempotency = { key: 'use-order', requestHash: 'h1' };
        const answer = { zeta: 1, alpha: { long_member_name: true, b: [3, 1, 2] }, mid: 'x' };
        const first = await commit('enrich', { records: 1, requests: 1 }, T, {
          idempotency,
          render: () => answer,
        });
        const again = await commit('enrich', { records: 1, requests: 1 }, T + 1, { idempotency });
        expect(first.kind === 'committed' && JSON.stringify(first.response)).toBe(JSON.stringify(answer));
        expect(again.kind === 'replayed' && JSON.stringify(again.response)).toBe(JSON.stringify(answer));
      });

      it('answers idempotency_conflict for the same key with another request, and consumes nothing', async () => {
        await commit('enrich', { records: 5, requests: 1 }, T, {
          idempotency: { key: 'use-1', requestHash: 'h1' },
        });
        const before = bySlot(await windows());
        expect(
          await commit('enrich', { records: 6, requests: 1 }, T + 1, {
            idempotency: { key: 'use-1', requestHash: 'h2' },
          }),
        ).toEqual({ kind: 'idempotency_conflict' });
        expect(bySlot(await windows())).toEqual(before);
      });

      it('answers not_found for an unknown account', async () => {
        const ghost = id('acc');
        const increments = incrementsFor(TINY.limits, 'enrich', { records: 1, requests: 1 });
        const render = () => null;
        expect(await store.usage.commit({ accountId: ghost, increments, now: T, render })).toEqual({
          kind: 'not_found',
        });
        expect(
          await store.usage.commit({
            accountId: ghost,
            increments,
            now: T,
            render,
            idempotency: { key: 'k', requestHash: 'h' },
          }),
        ).toEqual({ kind: 'not_found' });
        // An amount over every limit: no window would even start, and the account is still unknown.
        const over = incrementsFor(TINY.limits, 'enrich', { records: 1_000, requests: 1_000 });
        expect(await store.usage.commit({ accountId: ghost, increments: over, now: T, render })).toEqual({
          kind: 'not_found',
        });
      });
    });
  });
}
