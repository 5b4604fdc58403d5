/**
 * @module The read cache in front of a store: which account a key digest belongs to, and each
 * account's snapshot. Stale answers are what it must never give, so every change invalidates
 * what it touches (the store's own writes at once, other processes' through the store's change
 * signal), and a value read from the database is kept only if no invalidation that could concern
 * it happened while it was being read.
 */
import type { WindowState } from '../domain/fair-use.js';
import type { AccountSnapshot, KeyEntry } from './store.js';

const STRIPES = 1024;

function stripeOf(id: string): number {
  let h = 0;
  for (let i = 0; i < id.length; i++) h = (h * 31 + id.charCodeAt(i)) | 0;
  return h & (STRIPES - 1);
}

/** A key as the cache holds it: stamped with the generation of the keys it was current in. */
class CachedKey implements KeyEntry {
  readonly #generation: number;

  constructor(
    readonly keyId: string,
    readonly accountId: string,
    generation: number,
  ) {
    this.#generation = generation;
  }

  currentIn(generation: number): boolean {
    return this.#generation === generation;
  }
}

export class ReadCache {
  private readonly keys = new Map<string, KeyEntry>();
  private readonly snapshots = new Map<string, AccountSnapshot>();
  // Generations: bumped by every invalidation, compared before a read result is kept.
  private keysGeneration = 0;
  private readonly accountGenerations = new Uint32Array(STRIPES);
  private on = true;

  constructor(
    private readonly maxKeys = 100_000,
    private readonly maxSnapshots = 20_000,
  ) {}

  /**
   * Off: nothing is served or kept (the change signal is down and changes could be missed). Both
   * ways everything is forgotten, and reads under way when it turns on are not kept.
   */
  setEnabled(on: boolean): void {
    this.invalidateAll();
    this.on = on;
  }

  get enabled(): boolean {
    return this.on;
  }

  /**
   * The key with this digest. `last`, an answer this cache gave before for the same digest, is
   * answered again without a lookup while no invalidation of keys came since: what it says is
   * still true, even if the entry was since let go to make room.
   */
  key(digest: string, last?: KeyEntry): KeyEntry | undefined {
    if (!this.on) return undefined;
    if (last instanceof CachedKey && last.currentIn(this.keysGeneration)) return last;
    return this.keys.get(digest);
  }

  keyToken(): number {
    return this.keysGeneration;
  }

  putKey(digest: string, entry: KeyEntry, token: number): void {
    if (!this.on || token !== this.keysGeneration) return;
    if (this.keys.size >= this.maxKeys) this.keys.delete(this.keys.keys().next().value as string);
    this.keys.set(digest, new CachedKey(entry.keyId, entry.accountId, token));
  }

  snapshot(accountId: string): AccountSnapshot | undefined {
    return this.on ? this.snapshots.get(accountId) : undefined;
  }

  snapshotToken(accountId: string): number {
    return this.accountGenerations[stripeOf(accountId)]!;
  }

  putSnapshot(accountId: string, snapshot: AccountSnapshot, token: number): void {
    if (!this.on || token !== this.accountGenerations[stripeOf(accountId)]) return;
    if (this.snapshots.size >= this.maxSnapshots) {
      this.snapshots.delete(this.snapshots.keys().next().value as string);
    }
    this.snapshots.set(accountId, snapshot);
  }

  /** Something about this account changed: its snapshot (counts, balance, windows, status, plan). */
  invalidateAccount(accountId: string): void {
    this.accountGenerations[stripeOf(accountId)]!++;
    this.snapshots.delete(accountId);
  }

  /**
   * A consumption of this process changed the account's windows (and balance, when it charged) to
   * exactly these, and nothing could interleave with it (SQLite: in the same synchronous step as
   * its commit, under the write lock): a cached snapshot is brought up to date instead of dropped,
   * so the next request does not read it again. Reads under way are not kept, as on invalidation.
   */
  updateAccount(accountId: string, windows: WindowState[], tokenBalance: number | null): void {
    this.accountGenerations[stripeOf(accountId)]!++;
    const old = this.snapshots.get(accountId);
    if (!old) return;
    // Built field by field, not spread: this runs for every consumption.
    this.snapshots.set(accountId, {
      account: tokenBalance === null ? old.account : { ...old.account, tokenBalance },
      plan: old.plan,
      apiKeyCount: old.apiKeyCount,
      userCount: old.userCount,
      windows,
    });
  }

  /** A key was revoked or re-digested: which digests are valid changed. */
  invalidateKeys(): void {
    this.keysGeneration++;
    this.keys.clear();
  }

  invalidateAll(): void {
    this.invalidateKeys();
    for (let i = 0; i < STRIPES; i++) this.accountGenerations[i]!++;
    this.snapshots.clear();
  }
}

/**
 * What a write touched, in the words both stores use to say it (and PostgreSQL sends to the others,
 * as the account alone). `after`: the account's windows and balance after a consumption, for a
 * store whose writes nothing can interleave with (see ReadCache.updateAccount).
 */
export type Change =
  | { account: string; after?: { windows: WindowState[]; tokenBalance: number | null } }
  | 'keys'
  | 'all';

export function applyChange(cache: ReadCache, c: Change): void {
  if (c === 'keys') cache.invalidateKeys();
  else if (c === 'all') cache.invalidateAll();
  else if (c.after) cache.updateAccount(c.account, c.after.windows, c.after.tokenBalance);
  else cache.invalidateAccount(c.account);
}
