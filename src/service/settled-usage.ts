/**
 * @module Past days' usage sums, kept in memory. A day's counts reach the database through the
 * flushes of the servers that counted them, seconds after the day ends; so a day that ended more
 * than SETTLE_SECONDS ago is read once and kept, and only the days since (today, and yesterday in
 * the first hour of a day) are read on every request. For an account with 100 keys and 4 tools, 30
 * days of history is 12,000 rows to sum: kept, the Usage page and get_usage read 400. An entry lives
 * at most KEEP_SECONDS, which bounds how long a flush delayed past SETTLE_SECONDS (a server cut from
 * its database for that long, writing its counts when it is back) can go unseen.
 */
import { nowSeconds } from '../domain/clock.js';
import { addCounts, addDays, dayOf, type UsageGrouping } from '../domain/usage-history.js';
import type { UsageGroup, UsageHistoryStore } from '../store/store.js';
import type { ServiceDeps } from './context.js';

const SETTLE_SECONDS = 3_600;
const KEEP_SECONDS = 600;
/** Bounded: a server showing many accounts' history starts over rather than grow. */
const MAX_ENTRIES = 5_000;

/** Two lists of groups as one, summed where a group is in both, in group order. */
export function mergeGroups(a: readonly UsageGroup[], b: readonly UsageGroup[]): UsageGroup[] {
  if (b.length === 0) return [...a];
  if (a.length === 0) return [...b];
  const merged = new Map(a.map((g) => [g.group, { ...g }]));
  for (const u of b) {
    const g = merged.get(u.group);
    if (g) addCounts(g, u);
    else merged.set(u.group, { ...u });
  }
  return [...merged.values()].sort((x, y) => (x.group < y.group ? -1 : x.group > y.group ? 1 : 0));
}

export class SettledUsage {
  private readonly entries = new Map<string, { at: number; groups: UsageGroup[] }>();

  constructor(private readonly deps: Pick<ServiceDeps, 'clock' | 'store'>) {}

  /** The stored groups of `from`..`to`, the settled days among them from memory when kept. */
  async groups(accountId: string, from: string, to: string, by: UsageGrouping): Promise<UsageGroup[]> {
    const history = this.deps.store.usageHistory;
    const t = nowSeconds(this.deps.clock);
    const lastSettled = addDays(dayOf(t - SETTLE_SECONDS), -1);
    if (from > lastSettled) return history.history(accountId, from, to, by);
    const settledTo = to < lastSettled ? to : lastSettled;
    const settled = await this.settled(history, t, accountId, from, settledTo, by);
    if (to <= lastSettled) return settled;
    return mergeGroups(settled, await history.history(accountId, addDays(lastSettled, 1), to, by));
  }

  private async settled(
    history: UsageHistoryStore,
    t: number,
    accountId: string,
    from: string,
    to: string,
    by: UsageGrouping,
  ): Promise<UsageGroup[]> {
    const key = `${accountId} ${from} ${to} ${by}`;
    const hit = this.entries.get(key);
    if (hit && t - hit.at < KEEP_SECONDS) return hit.groups;
    const groups = await history.history(accountId, from, to, by);
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(key, { at: t, groups });
    return groups;
  }
}
