/** The users part of the Store contract (store.users), run on every backend. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Account } from '../../src/domain/accounts.js';
import type { Store } from '../../src/store/store.js';
import { account, id, migrateForContract, type StoreFixture, user } from './contract-fixtures.js';

export function usersContract(name: string, makeStore: () => Promise<StoreFixture>): void {
  describe(`${name} store contract`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ store, cleanup } = await makeStore());
      await migrateForContract(store);
    });
    afterEach(async () => {
      await cleanup();
    });

    describe('users', () => {
      let acc: Account;
      beforeEach(async () => {
        acc = account();
        await store.accounts.create(acc);
      });

      it('adds a user once per email in an account; another account may have the same email', async () => {
        const u = user(acc.id, 'ada@example.com');
        expect(await store.users.add(u)).toBe('added');
        expect(await store.users.add(user(acc.id, 'ada@example.com'))).toBe('duplicate');
        const other = account();
        await store.accounts.create(other);
        expect(await store.users.add(user(other.id, 'ada@example.com'))).toBe('added');
        expect(await store.users.list(acc.id)).toEqual([u]);
      });

      it('gives back a user by id, and nothing for an unknown id', async () => {
        const u = user(acc.id, 'cy@example.com');
        await store.users.add(u);
        expect(await store.users.get(u.id)).toEqual(u);
        expect(await store.users.get(id('usr'))).toBeUndefined();
      });

      it('removes a user once, answering with the user removed', async () => {
        const u = user(acc.id, 'bob@example.com');
        await store.users.add(u);
        expect(await store.users.remove(u.id)).toEqual(u);
        expect(await store.users.remove(u.id)).toBeUndefined();
        expect(await store.users.list(acc.id)).toEqual([]);
      });
    });
  });
}
