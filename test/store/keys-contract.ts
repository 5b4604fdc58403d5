/** The API keys part of the Store contract (store.keys), run on every backend. */
import { beforeEach, describe, expect, it } from 'vitest';
import type { Account } from '../../src/domain/accounts.js';
import { LAST_USED_RESOLUTION_SECONDS } from '../../src/domain/api-keys.js';
import type { Store } from '../../src/store/store.js';
import { account, apiKey, eachMigratedStore, id, type StoreFixture, T } from './contract-fixtures.js';

export function keysContract(name: string, makeStore: () => Promise<StoreFixture>): void {
  describe(`${name} store contract`, () => {
    let store: Store;
    eachMigratedStore(makeStore, (s) => {
      store = s;
    });

    describe('API keys', () => {
      let acc: Account;
      beforeEach(async () => {
        acc = account();
        await store.accounts.create(acc);
      });

      it('gives back a key record as created, without its digest', async () => {
        const k = apiKey(acc.id, { name: null });
        await store.keys.create(k, 'd1f00d');
        expect(await store.keys.get(k.id)).toEqual(k);
        expect(await store.keys.list(acc.id)).toEqual([k]);
        expect(JSON.stringify(await store.keys.list(acc.id))).not.toContain('d1f00d');
        expect(await store.keys.get(id('key'))).toBeUndefined();
      });

      it('finds an active key by its digest, and no longer once it is revoked', async () => {
        const k = apiKey(acc.id);
        await store.keys.create(k, 'digest-a');
        expect(await store.keys.findActive('digest-a')).toEqual({ keyId: k.id, accountId: acc.id });
        expect(await store.keys.findActive('digest-b')).toBeUndefined();
        const revoked = await store.keys.revoke(k.id, T + 9);
        expect(revoked).toEqual({ ...k, revokedAt: T + 9 });
        expect(await store.keys.findActive('digest-a')).toBeUndefined();
      });

      it('revokes idempotently: a second revoke keeps the first time', async () => {
        const k = apiKey(acc.id);
        await store.keys.create(k, 'digest-i');
        await store.keys.revoke(k.id, T + 9);
        expect(await store.keys.revoke(k.id, T + 99)).toEqual({ ...k, revokedAt: T + 9 });
        expect(await store.keys.revoke(id('key'), T + 99)).toBeUndefined();
      });

      it('revokes only the key it is given', async () => {
        const k1 = apiKey(acc.id);
        const k2 = apiKey(acc.id);
        await store.keys.create(k1, 'digest-1');
        await store.keys.create(k2, 'digest-2');
        await store.keys.revoke(k1.id, T + 1);
        expect(await store.keys.findActive('digest-2')).toEqual({ keyId: k2.id, accountId: acc.id });
      });

      it('re-digests a key only while it still has the digest it is expected to have', async () => {
        const k = apiKey(acc.id);
        await store.keys.create(k, 'digest-old');
        await store.keys.rehash(k.id, 'digest-other', 'digest-x');
        expect(await store.keys.findActive('digest-old')).toEqual({ keyId: k.id, accountId: acc.id });
        await store.keys.rehash(k.id, 'digest-old', 'digest-new');
        expect(await store.keys.findActive('digest-old')).toBeUndefined();
        expect(await store.keys.findActive('digest-new')).toEqual({ keyId: k.id, accountId: acc.id });
      });

      it('records last use in one batch, never moving a time back, ignoring unknown keys', async () => {
        const k1 = apiKey(acc.id);
        const k2 = apiKey(acc.id);
        await store.keys.create(k1, 'digest-u1');
        await store.keys.create(k2, 'digest-u2');
        await store.keys.touch([]);
        await store.keys.touch([
          { id: k1.id, at: T + 10 },
          { id: k2.id, at: T + 20 },
          { id: id('key'), at: T + 30 },
        ]);
        await store.keys.touch([{ id: k1.id, at: T + 5 }]);
        expect((await store.keys.get(k1.id))?.lastUsedAt).toBe(T + 10);
        expect((await store.keys.get(k2.id))?.lastUsedAt).toBe(T + 20);
      });

      it('rewrites a last use only once it is LAST_USED_RESOLUTION_SECONDS older', async () => {
        const k = apiKey(acc.id);
        await store.keys.create(k, 'digest-r1');
        await store.keys.touch([{ id: k.id, at: T }]);
        await store.keys.touch([{ id: k.id, at: T + LAST_USED_RESOLUTION_SECONDS - 1 }]);
        expect((await store.keys.get(k.id))?.lastUsedAt).toBe(T);
        await store.keys.touch([{ id: k.id, at: T + LAST_USED_RESOLUTION_SECONDS }]);
        expect((await store.keys.get(k.id))?.lastUsedAt).toBe(T + LAST_USED_RESOLUTION_SECONDS);
      });
    });
  });
}
