/**
 * @module The read cache's memory: which account a key digest belongs to, and each account's
 * snapshot. Stale answers are what it must never give, so every change a store reports invalidates
 * what it touches, and a value read from the database is kept only if no invalidation that could
 * concern it happened while it was being read (the generation tokens).
 */
import { sameSlot, type WindowState } from '../domain/fair-use.js';
import { categorySpan } from '../domain/fair-use-order.js';
import type { AccountSnapshot } from './accounts-store.js';
import type { AccountUsage, Change, ChangeObserver } from './changes.js';
import type { KeyEntry } from './keys-store.js';

const STRIPES = 1024;

function stripeOf(id: string): number {
  let h = 0;
  for (let i = 0; i < id.length; i++) h = (h * 31 + id.charCodeAt(i)) | 0;
  return h & (STRIPES - 1);
}

/**
 * The windows a consumption left, in the cached window objects when they are the same windows in
 * the same order (the common case: only amounts and, when one restarts, its times change), else
 * `after` itself. An account's windows live in the cache until its next consumption, long enough
 * to reach V8's old generation: new objects for each consumption made the metered path's garbage
 * mostly old-generation garbage, collected by full marking (docs/performance.md). Whoever holds a
 * replaced snapshot reads its windows in the step it got it, never in a later one.
 */
function carriedOver(cached: WindowState[], after: WindowState[]): WindowState[] {
  if (cached.length !== after.length) return after;
  // A consumption shares the windows it did not change (applyConsumption): only the others are
  // compared, so an account with many categories costs its consumed category's windows, not all.
  for (let i = 0; i < cached.length; i++) {
    const into = cached[i]!;
    const from = after[i]!;
    if (into !== from && !sameSlot(into, from)) return after;
  }
  for (let i = 0; i < cached.length; i++) {
    const into = cached[i]!;
    const from = after[i]!;
    if (into === from) continue;
    into.startedAt = from.startedAt;
    into.endsAt = from.endsAt;
    into.used = from.used;
  }
  return cached;
}

/**
 * The windows of `cached` with the categories `after.only` names replaced by `after.windows`: in
 * the cached objects when they are the same windows (as carriedOver), else a new array in key order.
 */
function mergedCategories(
  cached: WindowState[],
  after: WindowState[],
  only: readonly string[],
): WindowState[] {
  let merged = cached;
  for (const category of only) {
    const [start, end] = categorySpan(merged, category);
    const [aStart, aEnd] = categorySpan(after, category);
    let same = end - start === aEnd - aStart;
    for (let i = 0; same && i < end - start; i++) same = sameSlot(merged[start + i]!, after[aStart + i]!);
    if (same) {
      for (let i = 0; i < end - start; i++) {
        const into = merged[start + i]!;
        const w = after[aStart + i]!;
        if (into === w) continue;
        into.startedAt = w.startedAt;
        into.endsAt = w.endsAt;
        into.used = w.used;
      }
      continue;
    }
    merged = [...merged.slice(0, start), ...after.slice(aStart, aEnd), ...merged.slice(end)];
  }
  return merged;
}

export class ReadCache implements ChangeObserver {
  private readonly keys = new Map<string, KeyEntry>();
  private readonly snapshots = new Map<string, AccountSnapshot>();
  // Generations: bumped by every invalidation, compared before a read result is kept.
  private keysGeneration = 0;
  private readonly accountGenerations = new Uint32Array(STRIPES);

  constructor(
    private readonly maxKeys = 100_000,
    private readonly maxSnapshots = 20_000,
  ) {}

  key(digest: string): KeyEntry | undefined {
    return this.keys.get(digest);
  }

  keyToken(): number {
    return this.keysGeneration;
  }

  putKey(digest: string, entry: KeyEntry, token: number): void {
    if (token !== this.keysGeneration) return;
    if (this.keys.size >= this.maxKeys) this.keys.delete(this.keys.keys().next().value as string);
    this.keys.set(digest, entry);
  }

  snapshot(accountId: string): AccountSnapshot | undefined {
    return this.snapshots.get(accountId);
  }

  snapshotToken(accountId: string): number {
    return this.accountGenerations[stripeOf(accountId)]!;
  }

  putSnapshot(accountId: string, snapshot: AccountSnapshot, token: number): void {
    if (token !== this.accountGenerations[stripeOf(accountId)]) return;
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
  updateAccount(accountId: string, after: AccountUsage): void {
    this.accountGenerations[stripeOf(accountId)]!++;
    const old = this.snapshots.get(accountId);
    if (!old) return;
    const { tokenBalance } = after;
    // A new snapshot object (answers rendered from a snapshot are kept by its identity), built field
    // by field, not spread: this runs for every consumption.
    this.snapshots.set(accountId, {
      account: tokenBalance === old.account.tokenBalance ? old.account : { ...old.account, tokenBalance },
      plan: old.plan,
      apiKeyCount: old.apiKeyCount,
      userCount: old.userCount,
      windows: after.only
        ? mergedCategories(old.windows, after.windows, after.only)
        : carriedOver(old.windows, after.windows),
    });
  }

  /** A key was revoked or re-digested: which digests are valid changed. */
  invalidateKeys(): void {
    this.keysGeneration++;
    this.keys.clear();
  }

  changed(c: Change): void {
    if (c === 'keys') this.invalidateKeys();
    else if (c === 'all') this.invalidateAll();
    else if (c.after) this.updateAccount(c.account, c.after);
    else this.invalidateAccount(c.account);
  }

  usage(accountId: string): AccountUsage | undefined {
    const s = this.snapshots.get(accountId);
    return (
      s && { windows: s.windows, tokenBalance: s.account.tokenBalance, lowBalance: s.account.lowBalance }
    );
  }

  invalidateAll(): void {
    this.invalidateKeys();
    for (let i = 0; i < STRIPES; i++) this.accountGenerations[i]!++;
    this.snapshots.clear();
  }
}
