/**
 * @module Consumptions' notifications, batched. A NOTIFY inside a writing transaction takes a lock
 * that every such COMMIT in the database waits on, one after the other: at a consumption per
 * transaction that lock, not the work, set the pace (docs/performance.md). Consumptions commit
 * without one; what they changed is sent here after the commit, many consumptions' changes in one
 * NOTIFY outside any transaction, and each consumption is answered, as before, only once every
 * server with a cache has applied its notification. Sent while the previous batch is on its way,
 * changes wait for it to return and go together: the batch is as large as the load makes it.
 */
import type { Change } from '../changes.js';
import type { ChangeFeed } from './change-feed.js';
import type { PgPool } from './driver.js';

/** NOTIFY payloads are limited to 8000 bytes: at most this many changes (an account is ~32) per notification. */
const MAX_CHANGES = 200;

interface Pending {
  changes: Change[];
  resolve: () => void;
}

export class NotifyBatch {
  private pending: Pending[] = [];
  private sending = false;

  constructor(
    private readonly pool: PgPool,
    private readonly feed: ChangeFeed,
    private readonly warn?: (message: string, fields: Record<string, unknown>) => void,
  ) {}

  /** Resolves once every server with a cache has applied `changes` (or given up on the late ones). */
  notify(changes: Change[]): Promise<void> {
    return new Promise<void>((resolve) => {
      this.pending.push({ changes, resolve });
      if (!this.sending) void this.send();
    });
  }

  private async send(): Promise<void> {
    this.sending = true;
    try {
      while (this.pending.length > 0) {
        const batch: Pending[] = [];
        let n = 0;
        while (this.pending.length > 0 && n + this.pending[0]!.changes.length <= MAX_CHANGES) {
          const next = this.pending.shift()!;
          batch.push(next);
          n += next.changes.length;
        }
        // One change list larger than a notification can carry: everything is forgotten instead.
        if (batch.length === 0) batch.push({ ...this.pending.shift()!, changes: ['all'] });
        const changes = dedupe(batch.flatMap((p) => p.changes));
        const ticket = this.feed.ticket(changes);
        try {
          await this.pool.query('SELECT pg_notify($1, $2)', [this.feed.channel, ticket.payload]);
          await ticket.settle();
        } catch (err) {
          // The consumptions are committed: they are answered. Servers that miss the notification
          // stop trusting their caches when their own heartbeats fail against the same database.
          ticket.cancel();
          this.warn?.('could not notify the other servers of committed consumptions', {
            err: (err as Error).message,
          });
        }
        for (const p of batch) p.resolve();
      }
    } finally {
      this.sending = false;
    }
  }
}

function dedupe(changes: Change[]): Change[] {
  const seen = new Set<string>();
  const out: Change[] = [];
  for (const c of changes) {
    const key = typeof c === 'string' ? c : c.account;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(typeof c === 'string' ? c : { account: c.account });
  }
  return out;
}
