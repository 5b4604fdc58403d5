/**
 * @module The notification that goes with a group commit: sent in the COMMIT's own round trip, as
 * statements after it. A NOTIFY inside a writing transaction takes a lock that every such COMMIT in
 * the database waits on, one after the other (docs/performance.md); after the COMMIT it is a
 * transaction of its own, which commits without waiting for the WAL's flush (a notification is
 * not durable anyway, and a crash loses the caches it invalidates with it), so it holds that lock
 * only for an instant. The consumptions are answered once every server with a cache has applied it.
 */
import type { Change } from '../changes.js';
import type { ChangeFeed, Ticket } from './change-feed.js';
import { quoteLiteral } from './driver.js';

/** NOTIFY payloads are limited to 8000 bytes: at most this many accounts (~32 bytes each) per notification. */
const MAX_CHANGES = 200;

export interface CommitNotice {
  /** The statements to send after the COMMIT, in the same query. */
  statements: string[];
  ticket: Ticket;
}

export function commitNotice(feed: ChangeFeed, changes: Change[]): CommitNotice {
  // The other servers forget what changed; only this server keeps the values it wrote.
  const told = changes.length > MAX_CHANGES ? (['all'] as Change[]) : forgetting(changes);
  const ticket = feed.ticket(told);
  return {
    statements: [
      "SELECT set_config('synchronous_commit', 'off', true)",
      `SELECT pg_notify(${quoteLiteral(feed.channel)}, ${quoteLiteral(ticket.payload)})`,
    ],
    ticket,
  };
}

function forgetting(changes: Change[]): Change[] {
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
