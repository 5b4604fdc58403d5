/** The plans part of the Store contract (store.plans), run on every backend. */
import { describe, expect, it } from 'vitest';
import type { Plan } from '../../src/domain/plans.js';
import type { Store } from '../../src/store/store.js';
import { limits } from '../helpers.js';
import { eachMigratedStore, type StoreFixture, T } from './contract-fixtures.js';

export function plansContract(name: string, makeStore: () => Promise<StoreFixture>): void {
  describe(`${name} store contract`, () => {
    let store: Store;
    eachMigratedStore(makeStore, (s) => {
      store = s;
    });

    describe('plans', () => {
      it('puts a new plan, replaces an existing one, and has no plan it was not given', async () => {
        const pro: Plan = { id: 'pro', unlimited: false, limits: limits(1, 2, 3, 4, 5, 6) };
        await store.plans.put(pro, T);
        expect(await store.plans.get('pro')).toEqual(pro);
        const unlimitedPro: Plan = { id: 'pro', unlimited: true, limits: limits(7, 8, 9, 10, 11, 12) };
        await store.plans.put(unlimitedPro, T + 1);
        expect(await store.plans.get('pro')).toEqual(unlimitedPro);
        expect((await store.plans.list()).filter((p) => p.id === 'pro')).toEqual([unlimitedPro]);
        expect(await store.plans.get('enterprise')).toBeUndefined();
      });
    });
  });
}
