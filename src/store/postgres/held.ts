/**
 * @module A pooled connection kept across consecutive transactions: a group commit's batches, one
 * after the other while consumptions keep arriving. Taking a connection from the pool and giving it
 * back costs turns of the event loop between two batches (about half a millisecond under load, a
 * tenth of a batch's time: docs/performance.md); kept, the next batch's first round trip leaves as
 * soon as the last one's answer is in.
 */
import type { PgClient, PgPool } from './driver.js';

export class HeldConnection {
  private client: PgClient | undefined;

  constructor(private readonly pool: PgPool) {}

  /**
   * The connection held, taken from the pool the first time, after a release, or when the one held
   * was cut between two batches (it is destroyed, not used for a batch that would fail on it).
   */
  async get(): Promise<PgClient> {
    if (this.client?.lost) this.release();
    this.client ??= await this.pool.connect();
    return this.client;
  }

  /** Back to the pool; destroyed instead if `broken` (it is not to be given to anyone else). */
  release(broken?: Error): void {
    const client = this.client;
    this.client = undefined;
    client?.release(broken ?? false);
  }
}
