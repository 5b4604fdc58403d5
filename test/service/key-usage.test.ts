import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/domain/clock.js';
import { createServices } from '../../src/service/index.js';
import { KeyUsageRecorder } from '../../src/service/key-usage.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { accountWithKey, type Harness, KEY_SECRET, scratchServices, T0 } from '../helpers.js';

/** Services on `store` whose authentications are noted by a recorder of their own. */
function recording(store: Store, clock: Clock, chunkSize?: number) {
  const recorder = new KeyUsageRecorder(store, clock, 5_000, chunkSize);
  const services = createServices({
    store,
    clock,
    keyPrefix: 'tg',
    keySecret: KEY_SECRET,
    keyUsage: recorder,
  });
  return { recorder, services };
}

describe('key last-use times', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await scratchServices();
  });
  afterEach(async () => h.close());

  it('are noted on authentication and written only when flushed', async () => {
    const { recorder, services } = recording(h.store, h.clock);
    const { key, keyId } = await accountWithKey(services);
    h.clock.advance(60);
    expect((await services.keys.authenticate(key)).ok).toBe(true);
    expect((await h.store.keys.get(keyId))?.lastUsedAt).toBeNull();
    await recorder.flush();
    expect((await h.store.keys.get(keyId))?.lastUsedAt).toBe(Math.floor(T0 / 1000) + 60);
  });

  it('are written in chunks, every one of them', async () => {
    const { recorder, services } = recording(h.store, h.clock, 2);
    const keys = [];
    for (let i = 0; i < 5; i++) keys.push(await accountWithKey(services, { name: `Acme ${i}` }));
    h.clock.advance(60);
    for (const { key } of keys) expect((await services.keys.authenticate(key)).ok).toBe(true);
    await recorder.flush();
    for (const { keyId } of keys) {
      expect((await h.store.keys.get(keyId))?.lastUsedAt).toBe(Math.floor(T0 / 1000) + 60);
    }
  });

  it('are noted at most once a second per key, every later second still written', async () => {
    // The real recorder, counting what it is told.
    class Counting extends KeyUsageRecorder {
      told = 0;
      override touch(keyId: string, at?: number): void {
        this.told++;
        super.touch(keyId, at);
      }
    }
    const recorder = new Counting(h.store, h.clock);
    const services = createServices({
      store: h.store,
      reads: h.reads,
      clock: h.clock,
      keyPrefix: 'tg',
      keySecret: KEY_SECRET,
      keyUsage: recorder,
    });
    const { key, keyId } = await accountWithKey(services);
    h.clock.advance(60);
    await services.keys.authenticate(key);
    for (let i = 0; i < 5; i++) expect(services.keys.authenticate(key)).toMatchObject({ ok: true });
    expect(recorder.told).toBe(1);
    await recorder.flush();
    expect((await h.store.keys.get(keyId))?.lastUsedAt).toBe(Math.floor(T0 / 1000) + 60);
    h.clock.advance(61);
    for (let i = 0; i < 5; i++) expect(services.keys.authenticate(key)).toMatchObject({ ok: true });
    expect(recorder.told).toBe(2);
    await recorder.flush();
    expect((await h.store.keys.get(keyId))?.lastUsedAt).toBe(Math.floor(T0 / 1000) + 121);
  });

  it('are sent to the store once per key within the resolution, and again after it', async () => {
    // The real store, counting the keys it is asked to write.
    const sent: string[] = [];
    const counting: Store = Object.create(h.store, {
      keys: {
        value: Object.create(h.store.keys, {
          touch: {
            value: (entries: readonly { id: string; at: number }[]) => {
              sent.push(...entries.map((e) => e.id));
              return h.store.keys.touch(entries);
            },
          },
        }),
      },
    });
    const { recorder, services } = recording(counting, h.clock);
    const { key, keyId } = await accountWithKey(services);
    for (let s = 0; s < 59; s += 5) {
      expect((await services.keys.authenticate(key)).ok).toBe(true);
      await recorder.flush();
      h.clock.advance(5);
    }
    expect(sent).toEqual([keyId]);
    h.clock.advance(1);
    expect((await services.keys.authenticate(key)).ok).toBe(true);
    await recorder.flush();
    expect(sent).toEqual([keyId, keyId]);
    expect((await h.store.keys.get(keyId))?.lastUsedAt).toBe(Math.floor(T0 / 1000) + 61);
  });

  it('are not noted for a refused key', async () => {
    const { recorder, services } = recording(h.store, h.clock);
    const { key, keyId } = await accountWithKey(services);
    await services.keys.revoke(keyId);
    expect((await services.keys.authenticate(key)).ok).toBe(false);
    await recorder.stop();
    expect((await h.store.keys.get(keyId))?.lastUsedAt).toBeNull();
  });

  it('keep what could not be written while the database was locked, and write it at the next flush', async () => {
    const store = new SqliteStore({ path: h.dbPath, lockWaitMs: 50 });
    const { recorder, services } = recording(store, h.clock);
    const { key, keyId } = await accountWithKey(services);
    await services.keys.authenticate(key);
    const blocker = new Database(h.dbPath);
    blocker.exec('BEGIN IMMEDIATE');
    await expect(recorder.flush()).rejects.toThrow(/unavailable/);
    blocker.exec('COMMIT');
    blocker.close();
    await recorder.flush();
    expect((await store.keys.get(keyId))?.lastUsedAt).toBe(Math.floor(T0 / 1000));
    await store.close();
  });
});
