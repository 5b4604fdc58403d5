import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { digestKey } from '../../src/domain/api-keys.js';
import { createServices } from '../../src/service/index.js';
import { accountWithKey, type Harness, scratchServices } from '../helpers.js';

const OLD = 'old-secret-0123456789abcdef0123456789';
const NEW = 'new-secret-0123456789abcdef0123456789';

describe('rotating TOOLGATE_KEY_SECRET', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await scratchServices();
  });
  afterEach(async () => h.close());

  const withSecrets = (keySecret: string, previousKeySecrets: string[] = []) =>
    createServices({ store: h.store, clock: h.clock, keyPrefix: 'tg', keySecret, previousKeySecrets });

  it('keeps old keys working, moves them to the new secret on use, and makes new keys under the new one', async () => {
    const before = withSecrets(OLD);
    const { key, keyId } = await accountWithKey(before);

    const rotating = withSecrets(NEW, [OLD]);
    expect((await rotating.keys.authenticate(key)).ok).toBe(true);
    // Re-digested under the new secret: found by it, no longer by the old one.
    expect(await h.store.keys.findActive(digestKey(NEW, key))).toMatchObject({ keyId });
    expect(await h.store.keys.findActive(digestKey(OLD, key))).toBeUndefined();

    const fresh = await rotating.keys.create((await h.store.keys.get(keyId))!.accountId, 'new');
    if (!fresh.ok) throw new Error(fresh.error.message);
    expect(await h.store.keys.findActive(digestKey(NEW, fresh.value.key))).toBeDefined();

    // Once the old secret is dropped, both keys still work.
    const after = withSecrets(NEW);
    expect((await after.keys.authenticate(key)).ok).toBe(true);
    expect((await after.keys.authenticate(fresh.value.key)).ok).toBe(true);
  });

  it('refuses a key whose secret is no longer listed, and a revoked key under an old secret', async () => {
    const { key } = await accountWithKey(withSecrets(OLD));
    expect((await withSecrets(NEW).keys.authenticate(key)).ok).toBe(false);

    const other = await accountWithKey(withSecrets(OLD), { name: 'other' });
    await withSecrets(OLD).keys.revoke(other.keyId);
    expect((await withSecrets(NEW, [OLD]).keys.authenticate(other.key)).ok).toBe(false);
  });
});
