/** The accounts part of the Store contract (store.accounts: create, createFirst, get, list, count, update, snapshot), run on every backend. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_PLANS } from '../../src/domain/plans.js';
import type { Store } from '../../src/store/store.js';
import { limits } from '../helpers.js';
import {
  account,
  apiKey,
  eachMigratedStore,
  id,
  ledger,
  type StoreFixture,
  T,
  TINY,
  user,
} from './contract-fixtures.js';

export function accountsContract(name: string, makeStore: () => Promise<StoreFixture>): void {
  describe(`${name} store contract`, () => {
    let store: Store;
    eachMigratedStore(makeStore, (s) => {
      store = s;
    });

    describe('accounts', () => {
      it('gives back an account as it was created, and nothing for an unknown id', async () => {
        const a = account({ name: 'Initech', planId: 'subscription_27', unlimitedOverride: false });
        await store.accounts.create(a);
        expect(await store.accounts.get(a.id)).toEqual(a);
        expect(await store.accounts.get(id('acc'))).toBeUndefined();
      });

      it('lists accounts in id order, a page at a time after the last id seen', async () => {
        const made = [];
        for (let i = 0; i < 5; i++) {
          const a = account({ name: `A${i}` });
          await store.accounts.create(a);
          made.push(a);
        }
        const ids = made.map((a) => a.id).sort();
        const page1 = await store.accounts.list({ limit: 2 });
        expect(page1.map((a) => a.id)).toEqual(ids.slice(0, 2));
        const page2 = await store.accounts.list({ limit: 2, after: page1[1]!.id });
        expect(page2.map((a) => a.id)).toEqual(ids.slice(2, 4));
        const page3 = await store.accounts.list({ limit: 2, after: page2[1]!.id });
        expect(page3.map((a) => a.id)).toEqual(ids.slice(4));
        expect(await store.accounts.list({ limit: 2, after: ids[4]! })).toEqual([]);
        expect(await store.accounts.list({ limit: 10 })).toEqual(made);
        expect(await store.accounts.count()).toBe(5);
      });

      it('updates only the fields a patch names, and its updatedAt', async () => {
        const a = account();
        await store.accounts.create(a);
        const renamed = await store.accounts.update(a.id, { name: 'Globex' }, T + 10);
        expect(renamed).toEqual({ ...a, name: 'Globex', updatedAt: T + 10 });
        const moved = await store.accounts.update(
          a.id,
          { planId: 'subscription_97', status: 'suspended', unlimitedOverride: false },
          T + 20,
        );
        expect(moved).toEqual({
          ...a,
          name: 'Globex',
          planId: 'subscription_97',
          status: 'suspended',
          unlimitedOverride: false,
          updatedAt: T + 20,
          // A new plan: its periods run from now.
          planSince: T + 20,
        });
        expect(await store.accounts.get(a.id)).toEqual(moved);
      });

      it('clears the unlimited override with null and keeps it when the patch leaves it out', async () => {
        const a = account({ unlimitedOverride: true });
        await store.accounts.create(a);
        expect((await store.accounts.update(a.id, { name: 'B' }, T + 1))?.unlimitedOverride).toBe(true);
        expect(
          (await store.accounts.update(a.id, { unlimitedOverride: null }, T + 2))?.unlimitedOverride,
        ).toBe(null);
        expect(
          (await store.accounts.update(a.id, { unlimitedOverride: false }, T + 3))?.unlimitedOverride,
        ).toBe(false);
      });

      it('answers undefined when updating an unknown account', async () => {
        expect(await store.accounts.update(id('acc'), { name: 'X' }, T)).toBeUndefined();
      });

      it('writes the opening grant to the ledger and the balance in the same step', async () => {
        const a = account();
        await store.accounts.create(a, ledger(a.id, 'grant', 250, { reason: 'opening balance' }));
        expect((await store.accounts.get(a.id))?.tokenBalance).toBe(250);
        const entries = await store.ledger.list(a.id, { limit: 10 });
        expect(entries).toHaveLength(1);
        expect(entries[0]).toMatchObject({
          accountId: a.id,
          kind: 'grant',
          amount: 250,
          delta: 250,
          balanceAfter: 250,
          reason: 'opening balance',
        });
      });

      it('starts without a ledger entry and at a balance of 0 when there is no opening grant', async () => {
        const a = account();
        await store.accounts.create(a);
        expect((await store.accounts.get(a.id))?.tokenBalance).toBe(0);
        expect(await store.ledger.list(a.id, { limit: 10 })).toEqual([]);
      });

      it('revokes every key of an account in the same step that closes it', async () => {
        const a = account();
        await store.accounts.create(a);
        const k1 = apiKey(a.id);
        const k2 = apiKey(a.id);
        const k3 = apiKey(a.id);
        await store.keys.create(k1, 'digest-1');
        await store.keys.create(k2, 'digest-2');
        await store.keys.create(k3, 'digest-3');
        await store.keys.revoke(k1.id, T + 1);
        const other = account();
        await store.accounts.create(other);
        await store.keys.create(apiKey(other.id), 'digest-other');

        expect((await store.accounts.update(a.id, { status: 'closed' }, T + 50))?.status).toBe('closed');
        const keys = await store.keys.list(a.id);
        expect(keys.map((k) => [k.id, k.revokedAt])).toEqual([
          [k1.id, T + 1],
          [k2.id, T + 50],
          [k3.id, T + 50],
        ]);
        for (const d of ['digest-1', 'digest-2', 'digest-3'])
          expect(await store.keys.findActive(d)).toBeUndefined();
        expect((await store.accounts.snapshot(a.id))?.apiKeyCount).toBe(0);
        expect(await store.keys.findActive('digest-other')).toEqual({
          keyId: expect.any(String),
          accountId: other.id,
        });
      });

      it('keeps the keys of a suspended account', async () => {
        const a = account();
        await store.accounts.create(a);
        const k = apiKey(a.id);
        await store.keys.create(k, 'digest-s');
        await store.accounts.update(a.id, { status: 'suspended' }, T + 5);
        expect(await store.keys.findActive('digest-s')).toEqual({ keyId: k.id, accountId: a.id });
      });
    });

    describe('snapshots', () => {
      it('count only active keys, every user, and carry the account’s plan', async () => {
        const a = account({ planId: 'subscription_27' });
        await store.accounts.create(a);
        const keys = [apiKey(a.id), apiKey(a.id), apiKey(a.id)];
        for (const [i, k] of keys.entries()) await store.keys.create(k, `digest-${i}`);
        await store.keys.revoke(keys[0]!.id, T + 1);
        await store.users.add(user(a.id, 'a@example.com'));
        await store.users.add(user(a.id, 'b@example.com'));
        const other = account();
        await store.accounts.create(other);
        await store.keys.create(apiKey(other.id), 'digest-x');
        await store.users.add(user(other.id, 'c@example.com'));

        const s = await store.accounts.snapshot(a.id);
        expect(s).toEqual({
          account: a,
          plan: DEFAULT_PLANS.find((p) => p.id === 'subscription_27'),
          apiKeyCount: 2,
          userCount: 2,
          windows: [],
        });
        expect(await store.accounts.snapshot(id('acc'))).toBeUndefined();
      });

      it('see a plan change at once', async () => {
        const a = account({ planId: 'tiny' });
        await store.accounts.create(a);
        await store.plans.put({ ...TINY, limits: limits(1, 1, 1, 1, 1, 1) }, T + 1);
        expect((await store.accounts.snapshot(a.id))?.plan.limits).toEqual(limits(1, 1, 1, 1, 1, 1));
      });
    });
  });
}
