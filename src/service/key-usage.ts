/**
 * @module Records when each key was last used, off the hot path: authentication notes the time in
 * memory, and a timer writes what accumulated in one statement (and once more at shutdown).
 */
import { type Clock, nowSeconds } from '../domain/clock.js';
import type { Store } from '../store/store.js';

export class KeyUsageRecorder {
  private pending = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly intervalMs = 5_000,
  ) {}

  touch(keyId: string): void {
    this.pending.set(keyId, nowSeconds(this.clock));
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
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.store.touchApiKeys([...batch].map(([id, at]) => ({ id, at })));
    } catch (err) {
      for (const [id, at] of batch) if (!this.pending.has(id)) this.pending.set(id, at);
      throw err;
    }
  }

  /** Stops the timer and writes what is left. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
