/**
 * @module The read cache in front of a store: the hot path's two reads (a key by its digest, an
 * account's snapshot) answered from memory while the store says every change is reported, else
 * read and remembered. The one place that decides when memory may answer; the stores only report
 * what changed (changes.ts) and whether they are in sync.
 */
import type { AccountSnapshot, AccountStore } from './accounts-store.js';
import type { ChangeObserver } from './changes.js';
import type { KeyEntry, KeyStore } from './keys-store.js';
import { ReadCache } from './read-cache.js';
import type { Store } from './store.js';

/**
 * The reads that may answer at once: a value when memory holds it, else a promise of one. The
 * hot path's names for `store.keys.findActive` and `store.accounts.snapshot`.
 */
export interface Reads {
  findActiveKey(digest: string): KeyEntry | undefined | Promise<KeyEntry | undefined>;
  getSnapshot(accountId: string): AccountSnapshot | undefined | Promise<AccountSnapshot | undefined>;
}

/**
 * Memory may answer only while `store.inSync()`: every change committed so far, by this process or
 * any other, has been reported to the cache (changes.ts), so what was remembered from those
 * reports may be trusted now. While it is false nothing remembered may be; when it turns true
 * again the store reports `'all'` first. inSync is synchronous and cheap: asked before every answer
 * from memory.
 */
export class CachedReads implements Reads {
  // The two sub-stores the hot path reads, held directly: no more property loads than one store.
  private readonly keys: KeyStore;
  private readonly accounts: AccountStore;

  constructor(
    private readonly store: Store,
    private readonly cache: ReadCache,
  ) {
    this.keys = store.keys;
    this.accounts = store.accounts;
  }

  findActiveKey(digest: string): KeyEntry | undefined | Promise<KeyEntry | undefined> {
    if (this.store.inSync()) {
      const hit = this.cache.key(digest);
      if (hit !== undefined) return hit;
    }
    const token = this.cache.keyToken();
    const read = this.keys.findActive(digest);
    if (!(read instanceof Promise)) return this.keepKey(digest, read, token);
    return read.then((entry) => this.keepKey(digest, entry, token));
  }

  getSnapshot(accountId: string): AccountSnapshot | undefined | Promise<AccountSnapshot | undefined> {
    if (this.store.inSync()) {
      const hit = this.cache.snapshot(accountId);
      if (hit !== undefined) return hit;
    }
    const token = this.cache.snapshotToken(accountId);
    const read = this.accounts.snapshot(accountId);
    if (!(read instanceof Promise)) return this.keepSnapshot(accountId, read, token);
    return read.then((snapshot) => this.keepSnapshot(accountId, snapshot, token));
  }

  /** Kept only if the store is in sync now: a read made while it was not may have missed a change. */
  private keepKey(digest: string, entry: KeyEntry | undefined, token: number): KeyEntry | undefined {
    if (entry !== undefined && this.store.inSync()) this.cache.putKey(digest, entry, token);
    return entry;
  }

  private keepSnapshot(
    accountId: string,
    snapshot: AccountSnapshot | undefined,
    token: number,
  ): AccountSnapshot | undefined {
    if (snapshot !== undefined && this.store.inSync()) this.cache.putSnapshot(accountId, snapshot, token);
    return snapshot;
  }
}

/** The store's own reads, uncached (one-shot commands, tests not about the cache). */
export class StoreReads implements Reads {
  private readonly keys: KeyStore;
  private readonly accounts: AccountStore;

  constructor(store: Store) {
    this.keys = store.keys;
    this.accounts = store.accounts;
  }

  findActiveKey(digest: string): KeyEntry | undefined | Promise<KeyEntry | undefined> {
    return this.keys.findActive(digest);
  }

  getSnapshot(accountId: string): AccountSnapshot | undefined | Promise<AccountSnapshot | undefined> {
    return this.accounts.snapshot(accountId);
  }
}

/**
 * A store with a read cache in front: `open` builds the store reporting its changes to the cache.
 * `store` for everything, `reads` for the hot path's reads.
 */
export function withReadCache<S extends Store>(
  open: (observer: ChangeObserver) => S,
  cache = new ReadCache(),
): { store: S; reads: CachedReads } {
  const store = open(cache);
  return { store, reads: new CachedReads(store, cache) };
}
