/**
 * @module Changes between processes on one PostgreSQL database, and the guarantee that makes a
 * cache safe across servers: when a write is answered, every server with a cache has applied it.
 *
 * Every write notifies a channel in its own transaction (delivered on commit, to every listener, in
 * commit order). Each process LISTENs on a dedicated connection; a server invalidates its read
 * cache and acknowledges. The writer answers once its own notification has come back and every
 * server that was listening when it committed has acknowledged it, so the next request, on any
 * server, sees the change.
 *
 * Who must acknowledge: the servers this process has heard (their heartbeats, every second), but
 * not those it saw join after its write. A process that has listened for less than SETTLE_MS may
 * not have heard every server yet: it also asks PostgreSQL which listening connections exist.
 *
 * A server that does not acknowledge (stalled, cut off) is not waited for past SETTLE_MS: by then
 * its cache is off. A server trusts its cache only while its listening connection is proven alive,
 * by a heartbeat answered in the last HEALTHY_MS; a heartbeat that runs after a commit is answered
 * after that commit's notification, on the same connection.
 */
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Change, ChangeObserver } from '../changes.js';
import {
  type ChangeFeedOptions,
  decodeChange,
  encodeChange,
  HEALTHY_MS,
  HEARTBEAT_MS,
  LISTENER,
  type Peer,
  RECONNECT_MS,
  REMEMBERED,
  SETTLE_MS,
  type Ticket,
  type Waiter,
} from './feed-protocol.js';

export { type ChangeFeedOptions, SETTLE_MS, type Ticket } from './feed-protocol.js';

export class ChangeFeed {
  /** This process on the channel. */
  readonly id = randomBytes(6).toString('hex');
  readonly channel: string;
  private readonly observer: ChangeObserver | undefined;
  /** Whether the observer's memory may be trusted: every notification up to now has reached it. */
  private trusted = false;
  /** The listening connections of servers on this channel are named `toolgate-listen <tag> <id>`. */
  private readonly tag: string;
  private client: pg.Client | undefined;
  private epoch = 0;
  private listeningSince = 0;
  /** The current connection's first heartbeat has come back: writers wait for this server now. */
  private joined = false;
  private beats = 0;
  private heartbeat: NodeJS.Timeout | undefined;
  private reconnect: NodeJS.Timeout | undefined;
  private lastAlive = 0;
  private closed = false;

  private seq = 0;
  private ownOrder = 0;
  private readonly orderOfSeq = new Map<number, number>();
  private readonly waiters = new Set<Waiter>();
  private readonly peers = new Map<string, Peer>();
  private readonly pendingAcks = new Map<string, number>();
  private acking = false;
  /** The listening connection runs one query at a time: the heartbeat, acknowledgements, sync points. */
  private queue: Promise<unknown> = Promise.resolve();
  private beating = false;

  constructor(private readonly options: ChangeFeedOptions) {
    this.channel = options.channel;
    this.observer = options.observer;
    this.tag = createHash('sha256').update(options.channel).digest('hex').slice(0, 8);
  }

  /** Whether every change committed so far has been told to the observer. */
  healthy(): boolean {
    if (!this.observer) return false;
    if (this.client && this.joined && Date.now() - this.lastAlive <= HEALTHY_MS) {
      // Back after a late heartbeat (a stalled event loop, a slow server): every notification sent
      // before the last heartbeat's answer has arrived, so the observer starts again from nothing.
      if (!this.trusted) this.trust(true);
      return true;
    }
    if (this.trusted) this.trust(false);
    return false;
  }

  /** Either way, everything the observer remembers is forgotten ('all'). */
  private trust(on: boolean): void {
    this.observer?.changed('all');
    this.trusted = on;
  }

  /** For a transaction that changes `changes`: its notification, and the wait for the others. */
  ticket(changes: Change[]): Ticket {
    const seq = ++this.seq;
    let resolve!: () => void;
    const done = new Promise<void>((r) => {
      resolve = r;
    });
    const w: Waiter = { seq, epoch: this.client ? this.epoch : 0, resolve };
    this.waiters.add(w);
    return {
      payload: `c ${this.id} ${seq} ${changes.map(encodeChange).join(' ')}`,
      settle: () => {
        if (this.closed) this.finish(w);
        else if (this.waiters.has(w)) {
          w.timer = setTimeout(() => this.late(w), SETTLE_MS);
          this.check(w);
        }
        return done;
      },
      cancel: () => this.finish(w),
    };
  }

  async start(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.options.url,
      connectionTimeoutMillis: this.options.connectTimeoutMs,
      query_timeout: HEARTBEAT_MS,
      application_name: this.observer ? `${LISTENER} ${this.tag} ${this.id}` : 'toolgate-write',
    });
    client.on('notification', (msg) => {
      if (msg.channel === this.channel && this.client === client) this.receive(msg.payload ?? '');
    });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN "${this.channel}"`);
    } catch {
      this.lost(client);
      return;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.epoch++;
    this.listeningSince = Date.now();
    this.joined = false;
    this.beats = 0;
    this.beating = false;
    this.queue = Promise.resolve();
    this.lastAlive = Date.now();
    // Everything remembered before now is forgotten: changes made while nobody listened are unknown.
    // Memory is trusted again when this server's first heartbeat is back: from then on, writers wait for it.
    this.trust(false);
    this.resync(client);
    // Roll calls the lost connection did not answer are asked again here: unanswered, their writes
    // would wait SETTLE_MS.
    for (const w of this.waiters) if (w.roll === 'asking') this.rollCall(w);
    // Acknowledgements the lost connection did not send: what they name was applied all the same.
    this.flushAcks();
    if (this.observer) {
      this.beat(client);
      this.heartbeat = setInterval(() => this.beat(client), HEARTBEAT_MS);
      this.heartbeat.unref();
    }
  }

  /** Queued behind the connection's other queries; each is bounded (HEARTBEAT_MS) once sent. */
  private send(client: pg.Client, text: string, values: string[]): Promise<unknown> {
    const sent = this.queue.then(() => client.query(text, values));
    this.queue = sent.catch(() => {});
    return sent;
  }

  private notify(client: pg.Client, message: string): Promise<unknown> {
    return this.send(client, 'SELECT pg_notify($1, $2)', [this.channel, message]);
  }

  private beat(client: pg.Client): void {
    // One heartbeat at a time: a late one keeps memory untrusted until it is answered.
    if (this.beating) return;
    this.beating = true;
    this.notify(client, `h ${this.id} ${++this.beats}`).then(
      () => {
        this.beating = false;
        if (this.client === client) this.lastAlive = Date.now();
      },
      () => {
        this.beating = false;
        this.lost(client);
      },
    );
  }

  /** Writes whose notification went out before this connection listened wait for a sync point on it. */
  private resync(client: pg.Client): void {
    const behind = [...this.waiters].filter((w) => w.order === undefined && w.epoch !== this.epoch);
    if (behind.length === 0) return;
    const seq = ++this.seq;
    for (const w of behind) {
      w.seq = seq;
      w.epoch = this.epoch;
    }
    this.notify(client, `s ${this.id} ${seq}`).catch(() => this.lost(client));
  }

  private receive(payload: string): void {
    const words = payload.split(' ');
    const [kind, from] = words;
    const observer = this.observer;
    if (from === undefined) {
      observer?.changed('all');
    } else if (kind === 'c' || kind === 's') {
      const seq = Number(words[2]);
      // This process's own changes were reported as they committed.
      if (from === this.id) this.cameBack(seq);
      else if (observer) {
        if (kind === 'c') for (const word of words.slice(3)) observer.changed(decodeChange(word));
        this.pendingAcks.set(from, seq);
        this.flushAcks();
      }
    } else if (kind === 'h') {
      if (from !== this.id) {
        const peer = this.heard(from);
        if (words[2] === '1') {
          peer.joinedAt = this.ownOrder;
          this.checkAll();
        }
      } else if (!this.joined) {
        this.joined = true;
        this.lastAlive = Date.now();
        this.trust(true);
      }
    } else if (kind === 'a') {
      if (from === this.id) return;
      const peer = this.heard(from);
      const mine = words.slice(2).find((w) => w.startsWith(`${this.id}:`));
      const order = mine ? this.orderOfSeq.get(Number(mine.slice(this.id.length + 1))) : undefined;
      if (order !== undefined && order > peer.acked) {
        peer.acked = order;
        this.checkAll();
      }
    } else if (kind === 'b') {
      this.heard(from).left = true;
      this.checkAll();
    } else {
      observer?.changed('all');
    }
  }

  private heard(id: string): Peer {
    let peer = this.peers.get(id);
    if (!peer) {
      peer = { heard: 0, acked: 0 };
      this.peers.set(id, peer);
    }
    peer.heard = Date.now();
    return peer;
  }

  /** One of this process's messages is back: every message committed before it has been seen here too. */
  private cameBack(seq: number): void {
    const order = ++this.ownOrder;
    this.orderOfSeq.set(seq, order);
    if (this.orderOfSeq.size > REMEMBERED) {
      this.orderOfSeq.delete(this.orderOfSeq.keys().next().value as number);
    }
    const now = Date.now();
    for (const [id, p] of this.peers) if (now - p.heard > SETTLE_MS) this.peers.delete(id);
    const young = now - this.listeningSince < SETTLE_MS;
    for (const w of this.waiters) {
      if (w.seq !== seq || w.order !== undefined) continue;
      w.order = order;
      if (young) this.rollCall(w);
      this.check(w);
    }
  }

  /** Which servers listen now, by their connections' names: those this process has not heard yet. */
  private rollCall(w: Waiter): void {
    const client = this.client;
    if (!client) return;
    w.roll = 'asking';
    this.send(
      client,
      `SELECT application_name AS name FROM pg_stat_activity
        WHERE datname = current_database() AND application_name LIKE $1`,
      [`${LISTENER} ${this.tag} %`],
    ).then(
      (result) => {
        const rows = (result as pg.QueryResult<{ name: string }>).rows;
        w.roll = rows
          .map((r) => r.name.slice(LISTENER.length + this.tag.length + 2))
          .filter((id) => id !== this.id);
        this.check(w);
      },
      // Not known: the write waits SETTLE_MS.
      () => {},
    );
  }

  /** The servers `w` still waits for (those not heard from since `now - SETTLE_MS` count as gone). */
  private missing(w: Waiter, now = Date.now()): string[] {
    const order = w.order;
    if (order === undefined || w.roll === 'asking') return ['?'];
    const ids = new Set(this.peers.keys());
    for (const id of w.roll ?? []) ids.add(id);
    return [...ids].filter((id) => {
      const p = this.peers.get(id);
      if (!p) return true;
      if (p.left) return false;
      // Seen joining after this write: it listened too late to get it, and read the database after it.
      if (p.joinedAt !== undefined && p.joinedAt >= order) return false;
      return p.acked < order && now - p.heard <= SETTLE_MS;
    });
  }

  private check(w: Waiter): void {
    if (w.timer !== undefined && this.missing(w).length === 0) this.finish(w);
  }

  private checkAll(): void {
    for (const w of this.waiters) this.check(w);
  }

  private late(w: Waiter): void {
    if (!this.waiters.has(w)) return;
    // Named as they stood when the write committed (SETTLE_MS ago): by now, a silent one counts as gone.
    const missing = this.missing(w, Date.now() - SETTLE_MS);
    this.options.warn?.('a write was answered without every server acknowledging it', {
      waited_ms: SETTLE_MS,
      not_acknowledged_by:
        w.order === undefined
          ? 'unknown: this process did not get its own notification back (its listening connection is down or slow)'
          : w.roll === 'asking'
            ? 'unknown: the listening connections could not be listed'
            : missing.join(', '),
    });
    this.finish(w);
  }

  private finish(w: Waiter): void {
    if (w.timer) clearTimeout(w.timer);
    this.waiters.delete(w);
    w.resolve();
  }

  /** Acknowledgements go out one query at a time; those that arrive meanwhile go in the next. */
  private flushAcks(): void {
    const client = this.client;
    if (this.acking || this.pendingAcks.size === 0 || !client) return;
    const acks = [...this.pendingAcks].map(([writer, seq]) => `${writer}:${seq}`).join(' ');
    this.pendingAcks.clear();
    this.acking = true;
    this.notify(client, `a ${this.id} ${acks}`).then(
      () => {
        this.acking = false;
        this.flushAcks();
      },
      () => {
        this.acking = false;
        this.lost(client);
      },
    );
  }

  private lost(client: pg.Client): void {
    if (this.client === client) {
      this.client = undefined;
      this.joined = false;
      if (this.heartbeat) clearInterval(this.heartbeat);
      this.heartbeat = undefined;
    }
    this.trust(false);
    client.end().catch(() => {});
    if (!this.closed && !this.reconnect) {
      this.reconnect = setTimeout(() => {
        this.reconnect = undefined;
        void this.start();
      }, RECONNECT_MS);
      this.reconnect.unref();
    }
  }

  async stop(): Promise<void> {
    this.closed = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.reconnect) clearTimeout(this.reconnect);
    this.trust(false);
    const client = this.client;
    this.client = undefined;
    for (const w of this.waiters) if (w.timer) this.finish(w);
    if (client) {
      // The others stop waiting for this server at once.
      if (this.observer) {
        await this.notify(client, `b ${this.id}`).catch(() => {});
      }
      await client.end().catch(() => {});
    }
  }
}
