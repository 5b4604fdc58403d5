/** The users part of the Store contract (store.users), run on every backend. */
import { beforeEach, describe, expect, it } from 'vitest';
import type { Account } from '../../src/domain/accounts.js';
import { GRANT_HINT } from '../../src/domain/api-keys.js';
import { personSubject } from '../../src/domain/users.js';
import type { Store } from '../../src/store/store.js';
import { account, eachMigratedStore, id, type StoreFixture, T, user } from './contract-fixtures.js';

export function usersContract(name: string, makeStore: () => Promise<StoreFixture>): void {
  describe(`${name} store contract`, () => {
    let store: Store;
    eachMigratedStore(makeStore, (s) => {
      store = s;
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

      it('keeps an owner: a guarded demotion or removal of the last owner is refused, nothing written', async () => {
        const ann = { ...user(acc.id, 'ann@example.com'), role: 'owner' as const };
        const bob = { ...user(acc.id, 'bob@example.com'), role: 'owner' as const };
        await store.users.add(ann);
        await store.users.add(bob);
        const guard = { keepAnOwner: true };
        expect(await store.users.setRole(bob.id, 'member', undefined, guard)).toEqual({
          ...bob,
          role: 'member',
        });
        expect(await store.users.setRole(ann.id, 'member', undefined, guard)).toBe('last_owner');
        expect(await store.users.remove(ann.id, undefined, guard)).toBe('last_owner');
        // Unguarded (an operator), the last owner may go.
        expect(await store.users.remove(ann.id)).toEqual(ann);
        expect(await store.users.list(acc.id)).toEqual([{ ...bob, role: 'member' }]);
      });

      it('acts only for a current owner, and adds nothing to an account that is not active', async () => {
        const ann = { ...user(acc.id, 'ann@example.com'), role: 'owner' as const };
        const mia = user(acc.id, 'mia@example.com');
        await store.users.add(ann);
        await store.users.add(mia);
        expect(await store.users.add(user(acc.id, 'x@example.com'), undefined, { byOwner: mia.email })).toBe(
          'not_owner',
        );
        expect(await store.users.setRole(ann.id, 'member', undefined, { byOwner: mia.email })).toBe(
          'not_owner',
        );
        expect(await store.users.remove(ann.id, undefined, { byOwner: mia.email })).toBe('not_owner');
        await store.accounts.update(acc.id, { status: 'suspended' }, T);
        expect(await store.users.add(user(acc.id, 'y@example.com'), undefined, { activeAccount: true })).toBe(
          'inactive',
        );
        expect((await store.users.list(acc.id)).map((u) => u.email)).toEqual([ann.email, mia.email]);
      });

      it('revokes, with a user, the key rows of the grants that person allowed in the account', async () => {
        const ann = user(acc.id, 'ann@example.com');
        const bob = user(acc.id, 'bob@example.com');
        await store.users.add(ann);
        await store.users.add(bob);
        const grant = async (email: string) => {
          const keyId = id('key');
          await store.keys.create(
            {
              id: keyId,
              accountId: acc.id,
              name: 'OAuth: c',
              hint: GRANT_HINT,
              createdAt: T,
              revokedAt: null,
              lastUsedAt: null,
            },
            `digest-${keyId}`,
          );
          await store.oauth.upsert({
            model: 'Grant',
            id: keyId,
            payload: JSON.stringify({
              jti: keyId,
              accountId: personSubject('contract-secret', email),
              clientId: 'c',
            }),
            grantId: null,
            clientId: 'c',
            uid: null,
            createdAt: T,
            expiresAt: T + 3600,
          });
          return keyId;
        };
        const annGrant = await grant('Ann@Example.com');
        const bobGrant = await grant('bob@example.com');
        expect(
          await store.users.remove(ann.id, undefined, {
            revokeGrants: { at: T + 5, subject: personSubject('contract-secret', 'ann@example.com') },
          }),
        ).toEqual(ann);
        expect((await store.keys.get(annGrant))?.revokedAt).toBe(T + 5);
        expect((await store.keys.get(bobGrant))?.revokedAt).toBeNull();
      });
    });
  });
}
