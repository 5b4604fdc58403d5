/**
 * @module The usage counters: every authenticated tool call is counted in memory on the request path
 * (a map lookup), and what accumulated is written at most once a second as additive upserts (so
 * any number of servers add up), and once more on graceful shutdown. A crash loses at most the last
 * second of these analytics counts, never a consumption or a charge: those are committed with the
 * call. Each call is also counted in its account's row of the hour (the console's view of a day),
 * written with the days. Rows older than the retention are pruned as the days go by.
 */
import { type Clock, nowSeconds } from '../domain/clock.js';
import {
  addCounts,
  addDays,
  type CallOutcome,
  countCall,
  dayOf,
  type Surface,
  type UsageGrouping,
  type UsageRow,
  zeroCounts,
} from '../domain/usage-history.js';
import {
  addHourCounts,
  HOURLY_RETENTION_DAYS,
  type HourGroup,
  type HourRow,
  zeroHourCounts,
} from '../domain/usage-hours.js';
import type { UsageGroup, UsageHistoryStore, Warn } from '../store/store.js';

export interface UsageCountersOptions {
  /** How often what accumulated is written, in milliseconds. */
  flushMs?: number;
  /** Days of history kept (TOOLGATE_USAGE_RETENTION_DAYS). */
  retentionDays?: number;
  warn?: Warn;
}

export const DEFAULT_RETENTION_DAYS = 400;
/** Rows held while the store cannot be written: beyond this, the oldest counts are given up. */
const MAX_PENDING_ROWS = 100_000;
const PRUNE_EVERY_MS = 3_600_000;

/**
 * A row being counted: one per account, day, key, tool and surface, kept for the day and counted
 * into in place. A flush takes its counts and zeroes it, rather than leaving it behind for a fresh
 * row: rows replaced every second lived just long enough to be promoted to the old generation, a
 * hundred bytes or so a call (docs/performance.md).
 */
type CountedRow = UsageRow & { queued: boolean };
type CountedHour = HourRow & { queued: boolean };

export class UsageCounters {
  /** The rows counted into since the last flush took them, in the order first counted. */
  private queue: CountedRow[] = [];
  /** Today's rows by key id, tool and surface (http, mcp): the request path's way to them. */
  private rows = new Map<string, Map<string, [CountedRow | undefined, CountedRow | undefined]>>();
  private rowsDay = '';
  /** This hour's rows by account: one more map lookup per call, for the day's view by the hour. */
  private hourRows = new Map<string, CountedHour>();
  private hourQueue: CountedHour[] = [];
  private timer: NodeJS.Timeout | undefined;
  private day = '';
  private dayNumber = -1;
  private hour = 0;
  private hourNumber = -1;
  private lastPrune = 0;
  private failing = false;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: UsageHistoryStore,
    private readonly clock: Clock,
    private readonly opts: UsageCountersOptions = {},
  ) {}

  /**
   * Counts one call. On the request path: lookups by the key id and tool name the caller already
   * holds (strings whose hashes V8 keeps), not by a key string made for each call.
   */
  count(accountId: string, keyId: string, tool: string, surface: Surface, outcome: CallOutcome): void {
    const day = this.today();
    if (day !== this.rowsDay) {
      this.rowsDay = day;
      this.rows = new Map();
    }
    let byTool = this.rows.get(keyId);
    if (!byTool) {
      byTool = new Map();
      this.rows.set(keyId, byTool);
    }
    let pair = byTool.get(tool);
    if (!pair) {
      pair = [undefined, undefined];
      byTool.set(tool, pair);
    }
    const at = surface === 'http' ? 0 : 1;
    let row = pair[at];
    if (!row) {
      row = { accountId, day, keyId, tool, surface, ...zeroCounts(), queued: false };
      pair[at] = row;
    }
    if (!row.queued) {
      row.queued = true;
      this.queue.push(row);
    }
    countCall(row, outcome);
    this.countHour(accountId, day, outcome);
  }

  private countHour(accountId: string, day: string, outcome: CallOutcome): void {
    let row = this.hourRows.get(accountId);
    if (!row) {
      row = { accountId, day, hour: this.hour, ...zeroHourCounts(), queued: false };
      this.hourRows.set(accountId, row);
    }
    if (!row.queued) {
      row.queued = true;
      this.hourQueue.push(row);
    }
    row.calls++;
    if (outcome.kind === 'failed') row.failed++;
    else row.tokens += outcome.tokens;
  }

  /**
   * Counts a call answered, with what it came to, its amount in its unit (none given: an account
   * tool's, no records, no tokens).
   */
  answered(
    accountId: string,
    keyId: string,
    tool: string,
    surface: Surface,
    outcome: { records: number; tokens: number; missed: boolean; unit?: string | undefined } | undefined,
  ): void {
    this.count(accountId, keyId, tool, surface, {
      kind: 'answered',
      records: outcome ? outcome.records : 0,
      tokens: outcome ? outcome.tokens : 0,
      missed: outcome ? outcome.missed : false,
      unit: outcome?.unit,
    });
  }

  /** This process's counts not yet written, for an account over days, grouped as the store groups them. */
  unwritten(accountId: string, from: string, to: string, by: UsageGrouping): UsageGroup[] {
    const groups = new Map<string, UsageGroup>();
    for (const row of this.queue) {
      if (row.accountId !== accountId || row.day < from || row.day > to) continue;
      const key = by === 'day' ? row.day : by === 'key' ? row.keyId : row.tool;
      let g = groups.get(key);
      if (!g) {
        g = { group: key, ...zeroCounts() };
        groups.set(key, g);
      }
      addCounts(g, row);
    }
    return [...groups.values()];
  }

  /** This process's counts not yet written, for an account's hours of `day`. */
  unwrittenHours(accountId: string, day: string): HourGroup[] {
    const hours = new Map<number, HourGroup>();
    for (const row of this.hourQueue) {
      if (row.accountId !== accountId || row.day !== day) continue;
      const h = hours.get(row.hour) ?? { hour: row.hour, ...zeroHourCounts() };
      addHourCounts(h, row);
      hours.set(row.hour, h);
    }
    return [...hours.values()].sort((a, b) => a.hour - b.hour);
  }

  start(): void {
    this.timer ??= setInterval(() => void this.flush().catch(() => {}), this.opts.flushMs ?? 1_000);
    this.timer.unref();
  }

  /** Writes what accumulated; flushes run one after another. Rejects when the store cannot be written. */
  flush(): Promise<void> {
    const run = this.flushing.then(() => this.write());
    this.flushing = run.catch(() => {});
    return run;
  }

  /** Stops the timer and writes what is left. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  /** Today, and this hour kept with it (a new hour starts its rows afresh). */
  private today(): string {
    const h = Math.floor(this.clock.now() / 3_600_000);
    if (h === this.hourNumber) return this.day;
    this.hourNumber = h;
    this.hour = h % 24;
    this.hourRows = new Map();
    const n = Math.floor(h / 24);
    if (n !== this.dayNumber) {
      this.dayNumber = n;
      this.day = dayOf(n * 86_400);
    }
    return this.day;
  }

  private async write(): Promise<void> {
    await this.pruneNowAndThen();
    if (this.queue.length === 0 && this.hourQueue.length === 0) return;
    const rows = this.queue;
    const hours = this.hourQueue;
    this.queue = [];
    this.hourQueue = [];
    // The counts taken: each row goes on counting from zero, and is queued again when it does.
    const batch: UsageRow[] = rows.map((row) => {
      row.queued = false;
      const { queued: _, ...taken } = row;
      // Its units object goes with the counts taken; the row starts without one.
      Object.assign(row, zeroCounts());
      return taken;
    });
    const hourBatch: HourRow[] = hours.map((row) => {
      row.queued = false;
      const { queued: _, ...taken } = row;
      Object.assign(row, zeroHourCounts());
      return taken;
    });
    try {
      await this.store.add(batch, hourBatch);
      if (this.failing) this.opts.warn?.('usage counts written again', {});
      this.failing = false;
    } catch (err) {
      // Kept for the next try: added back to the row, beside whatever it counted meanwhile.
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i] as CountedRow;
        if (!row.queued) {
          // Beyond the limit the counts are given up, the oldest first: these are the oldest.
          if (this.queue.length >= MAX_PENDING_ROWS) continue;
          row.queued = true;
          this.queue.push(row);
        }
        addCounts(row, batch[i] as UsageRow);
      }
      this.keepHours(hours, hourBatch);
      if (!this.failing) {
        this.opts.warn?.('usage counts could not be written; kept in memory and retried', {
          err: { message: (err as Error).message },
        });
      }
      this.failing = true;
      throw err;
    }
  }

  /** A failed write's hours, added back to their rows for the next flush (bounded as the days are). */
  private keepHours(rows: CountedHour[], taken: HourRow[]): void {
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i] as CountedHour;
      if (!row.queued) {
        if (this.hourQueue.length >= MAX_PENDING_ROWS) continue;
        row.queued = true;
        this.hourQueue.push(row);
      }
      addHourCounts(row, taken[i] as HourRow);
    }
  }

  private async pruneNowAndThen(): Promise<void> {
    const ms = this.clock.now();
    if (this.lastPrune !== 0 && ms - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = ms;
    const keep = this.opts.retentionDays ?? DEFAULT_RETENTION_DAYS;
    const today = dayOf(nowSeconds(this.clock));
    await this.store.prune(addDays(today, -keep)).catch(() => {});
    await this.store.pruneHours(addDays(today, -(HOURLY_RETENTION_DAYS - 1))).catch(() => {});
  }
}
