/** The migrations part of the Store contract: what migrate applies and seeds, on every backend. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_PLANS, type Plan } from '../../src/domain/plans.js';
import { MIGRATIONS, migrationLabel } from '../../src/store/migrations/index.js';
import type { Store } from '../../src/store/store.js';
import { limits } from '../helpers.js';
import { type StoreFixture, T, TINY } from './contract-fixtures.js';

export function lifecycleContract(name: string, makeStore: () => Promise<StoreFixture>): void {
  describe(`${name} store contract`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ store, cleanup } = await makeStore());
    });
    afterEach(async () => {
      await cleanup();
    });

    describe('migrate', () => {
      it('applies the migrations on an empty database, and nothing on a second call', async () => {
        const first = await store.migrate(DEFAULT_PLANS, T);
        expect(first.applied.length).toBeGreaterThan(0);
        expect(first.applied).toEqual(MIGRATIONS.map(migrationLabel));
        expect(first.applied[0]).toBe('001-initial');
        expect(await store.migrate(DEFAULT_PLANS, T + 1)).toEqual({ applied: [] });
        await expect(store.ping()).resolves.toBeUndefined();
      });

      it('seeds the default plans into an empty catalogue', async () => {
        await store.migrate(DEFAULT_PLANS, T);
        const byId = (a: Plan, b: Plan) => a.id.localeCompare(b.id);
        expect((await store.plans.list()).sort(byId)).toEqual([...DEFAULT_PLANS].sort(byId));
        expect(await store.plans.get('subscription_97')).toEqual(
          DEFAULT_PLANS.find((p) => p.id === 'subscription_97'),
        );
      });

      it('seeds nothing into a catalogue that has plans: a plan changed with putPlan survives', async () => {
        await store.migrate(DEFAULT_PLANS, T);
        const changed: Plan = { id: 'free', unlimited: true, limits: limits(1, 2, 3, 4, 5, 6) };
        await store.plans.put(changed, T + 1);
        await store.migrate([...DEFAULT_PLANS, TINY], T + 2);
        expect(await store.plans.get('free')).toEqual(changed);
        expect(await store.plans.get('tiny')).toBeUndefined();
        expect(await store.plans.list()).toHaveLength(DEFAULT_PLANS.length);
      });

      it('seeds the plans it is given when the catalogue is still empty on a later call', async () => {
        await store.migrate([], T);
        expect(await store.plans.list()).toEqual([]);
        await store.migrate([TINY], T + 1);
        expect(await store.plans.list()).toEqual([TINY]);
      });
    });
  });
}
