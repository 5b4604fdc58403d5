/**
 * @module Changes between servers on one PostgreSQL database. Every write notifies a channel in
 * its own transaction (delivered on commit); each server LISTENs on a dedicated connection and
 * invalidates its read cache. The cache is trusted only while that connection is proven alive
 * (a heartbeat in the last HEALTHY_MS): a silent network partition must not leave a server
 * answering from memory while others change the data.
 */
import pg from 'pg';
import { applyChange, type Change, type ReadCache } from '../read-cache.js';

const HEARTBEAT_MS = 1_000;
const HEALTHY_MS = 2_500;
const RECONNECT_MS = 1_000;

export function encodeChange(c: Change): string {
  return c === 'keys' ? 'k' : c === 'all' ? '*' : `a:${c.account}`;
}

function decode(payload: string | undefined): Change {
  if (payload === 'k') return 'keys';
  if (payload?.startsWith('a:')) return { account: payload.slice(2) };
  return 'all';
}

export class ChangeFeed {
  private client: pg.Client | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private reconnect: NodeJS.Timeout | undefined;
  private lastAlive = 0;
  private closed = false;

  constructor(
    private readonly url: string,
    readonly channel: string,
    private readonly cache: ReadCache,
    private readonly timeoutMs: number,
  ) {
    cache.setEnabled(false);
  }

  /** Whether the cache may be used now. */
  healthy(): boolean {
    if (this.client && Date.now() - this.lastAlive <= HEALTHY_MS) {
      // Back after a late heartbeat (a stalled event loop, a slow server): every notification sent
      // before the last heartbeat's answer has arrived, so the cache starts again, empty.
      if (!this.cache.enabled) this.cache.setEnabled(true);
      return true;
    }
    if (this.cache.enabled) this.cache.setEnabled(false);
    return false;
  }

  async start(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.url,
      connectionTimeoutMillis: this.timeoutMs,
      query_timeout: HEARTBEAT_MS,
      application_name: 'toolgate-listen',
    });
    client.on('notification', (msg) => {
      if (msg.channel === this.channel) applyChange(this.cache, decode(msg.payload));
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
    this.lastAlive = Date.now();
    // Everything cached before now is forgotten: changes made while nobody listened are unknown.
    this.cache.setEnabled(true);
    this.heartbeat = setInterval(() => {
      client.query('SELECT 1').then(
        () => {
          if (this.client === client) this.lastAlive = Date.now();
        },
        () => this.lost(client),
      );
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  private lost(client: pg.Client): void {
    if (this.client === client) {
      this.client = undefined;
      if (this.heartbeat) clearInterval(this.heartbeat);
      this.heartbeat = undefined;
    }
    this.cache.setEnabled(false);
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
    this.cache.setEnabled(false);
    const client = this.client;
    this.client = undefined;
    if (client) await client.end().catch(() => {});
  }
}
