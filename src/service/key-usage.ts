/**
 * @module Records when each key was last used, off the hot path: authentication notes the time in
 * memory, and a timer writes what accumulated (and once more at shutdown), in transactions of at
 * most `chunkSize` keys so that no single write holds the event loop (SQLite) or the rows for long.
 * A key this process wrote less than LAST_USED_RESOLUTION_SECONDS ago is not sent again: the store
 * would leave its row as it is, after reading it (on a busy server, every key every tick).
 */
import { LAST_USED_RESOLUTION_SECONDS } from '../domain/api-keys.js';
import { type Clock, nowSeconds } from '../domain/clock.js';
import type { Store } from '../store/store.js';

export class KeyUsageRecorder {
  private pending = new Map<string, number>();
  /** When this process last wrote each key, for those written within the resolution. */
  private readonly written = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly intervalMs = 5_000,
    private readonly chunkSize = 200,
  ) {}

  /** Notes a use of the key at `at` (now by default), to be written at the next flush. */
  touch(keyId: string, at: number = nowSeconds(this.clock)): void {
    const written = this.written.get(keyId);
    if (written !== undefined && at - written < LAST_USED_RESOLUTION_SECONDS) return;
    this.pending.set(keyId, at);
  }

  start(): void {
    this.timer ??= setInterval(() => {
      this.flush().catch(() => {
        // The store is down: what was not written is merged back and tried at the next tick.
      });
    }, this.intervalMs);
    this.timer.unref();
  }

  async flush(): Promise<void> {
    this.forgetWritten(nowSeconds(this.clock));
    if (this.pending.size === 0) return;
    const batch = [...this.pending].map(([id, at]) => ({ id, at }));
    this.pending = new Map();
    for (let i = 0; i < batch.length; i += this.chunkSize) {
      try {
        const chunk = batch.slice(i, i + this.chunkSize);
        await this.store.keys.touch(chunk);
        for (const { id, at } of chunk) this.written.set(id, at);
      } catch (err) {
        // What was not written goes back, unless a newer use was noted meanwhile.
        for (const { id, at } of batch.slice(i)) if (!this.pending.has(id)) this.pending.set(id, at);
        throw err;
      }
    }
  }

  /** Keeps the memory of writes to those the resolution still covers: the map stays as small as a minute's keys. */
  private forgetWritten(now: number): void {
    for (const [id, at] of this.written)
      if (now - at >= LAST_USED_RESOLUTION_SECONDS) this.written.delete(id);
  }

  /** Stops the timer and writes what is left. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
