/**
 * @module The change feed's vocabulary: its options and timing, its messages on the channel, and the
 * records it keeps of writes waiting for acknowledgements and of the servers it has heard.
 *
 * Messages on the channel, words separated by spaces (anything else: forget everything):
 * - `c <writer> <seq> <change>...` a transaction's changes: `k` keys, `*` all, `a:<account id>`;
 * - `s <writer> <seq>` a sync point, for a write whose notification the writer's listener missed;
 * - `h <server> <n>` the n-th heartbeat of a server with a cache on its connection (1: it joins);
 * - `a <server> <writer>:<seq>...` that server has applied each writer's messages up to that one;
 * - `b <server>` a server leaving.
 */
import type { Change, ChangeObserver } from '../changes.js';
import type { Warn } from '../store.js';

export const HEARTBEAT_MS = 1_000;
export const HEALTHY_MS = 2_500;
export const RECONNECT_MS = 1_000;
/**
 * The longest a write waits for the others. A server whose last heartbeat was answered before the
 * commit has its cache off HEALTHY_MS later; a heartbeat takes at most HEARTBEAT_MS, so one answered
 * after that was run after the commit, and behind its notification. Also how long a server not
 * heard from counts as there.
 */
export const SETTLE_MS = HEALTHY_MS + HEARTBEAT_MS;
// Own messages remembered, to place the acknowledgements that name them.
export const REMEMBERED = 4_096;
export const LISTENER = 'toolgate-listen';

export function encodeChange(c: Change): string {
  return c === 'keys' ? 'k' : c === 'all' ? '*' : `a:${c.account}`;
}

export function decodeChange(word: string): Change {
  if (word === 'k') return 'keys';
  if (word.startsWith('a:') && word.length > 2) return { account: word.slice(2) };
  return 'all';
}

/** A write's place in the settling: made before its commit, awaited after it. */
export interface Ticket {
  /** The notification to send in the write's transaction. */
  readonly payload: string;
  /** Resolves once every server with a cache has applied the write (or SETTLE_MS has passed). */
  settle(): Promise<void>;
  /** The transaction rolled back: nothing was sent. */
  cancel(): void;
}

export interface Waiter {
  seq: number;
  /** The listening connection that will see `seq` come back (0: none was listening). */
  epoch: number;
  /** Where `seq` came back among this process's own messages. */
  order?: number;
  /** Servers PostgreSQL showed listening, when this process was too new to have heard them all. */
  roll?: string[] | 'asking';
  resolve: () => void;
  /** Set when the write has committed and waits. */
  timer?: NodeJS.Timeout;
}

export interface Peer {
  heard: number;
  /** How far into this process's own messages (their order) it has acknowledged. */
  acked: number;
  /** This process's own-message count when the server was seen joining (its first heartbeat). */
  joinedAt?: number;
  /** It said it leaves: nobody waits for it (kept until it is no longer listed anywhere). */
  left?: boolean;
}

export interface ChangeFeedOptions {
  url: string;
  channel: string;
  connectTimeoutMs: number;
  /** Told every other process's changes; without one, the process only writes (the CLI) and is not waited for. */
  observer?: ChangeObserver;
  /** Told when a write was answered without every server's acknowledgement. */
  warn?: Warn;
}
