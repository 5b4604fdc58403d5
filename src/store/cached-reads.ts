/**
 * @module The read cache in front of a store: the hot path's two reads (a key by its digest, an
 * account's snapshot) answered from memory while the store says every change is reported, else
 * read and remembered. The one place that decides when memory may answer; the stores only report
 * what changed (changes.ts) and whether they are in sync.
 */
import type { ChangeObserver } from './changes.js';
import { ReadCache } from './read-cache.js';
import type { AccountSnapshot, KeyEntry, Store } from './store.js';

/** The reads that may answer at once: a value when memory holds it, else a promise of one. */
export type Reads = Pick<Store, 'findActiveKey' | 'getSnapshot'>;

export class CachedReads implements Reads {
  constructor(
    private readonly store: Store,
    private readonly cache: ReadCache,
  ) {}

  findActiveKey(digest: string): KeyEntry | undefined | Promise<KeyEntry | undefined> {
    if (this.store.inSync()) {
      const hit = this.cache.key(digest);
      if (hit !== undefined) return hit;
    }
    const token = this.cache.keyToken();
    const read = this.store.findActiveKey(digest);
    if (!(read instanceof Promise)) return this.keepKey(digest, read, token);
    return read.then((entry) => this.keepKey(digest, entry, token));
  }

  getSnapshot(accountId: string): AccountSnapshot | undefined | Promise<AccountSnapshot | undefined> {
    if (this.store.inSync()) {
      const hit = this.cache.snapshot(accountId);
      if (hit !== undefined) return hit;
    }
    const token = this.cache.snapshotToken(accountId);
    const read = this.store.getSnapshot(accountId);
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
