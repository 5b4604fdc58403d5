/**
 * @module The per-key rate limit shared by every server through Redis (TOOLGATE_REDIS_URL): one
 * fixed one-second window per key on Redis's clock, counted by a script (TIME, INCRBY, EXPIRE) so
 * that servers with drifting clocks still share one window. A key refused in a window is refused
 * locally for the rest of it, without asking Redis again. The requests of one turn of the event loop
 * ask together, in one script call: a call costs the client some 15 µs of CPU whatever it carries
 * (docs/performance.md). Redis unreachable: requests are served
 * under this server's own limit (TOOLGATE_REDIS_FAIL=open, the default) or refused with 503
 * (closed), logged once; the client
 * reconnects by itself and the shared limit comes back without a restart.
 */
import { createClient } from 'redis';
import type { Clock } from '../domain/clock.js';
import type { LimitState } from '../domain/rate-limit.js';
import { ApiError } from './errors.js';

/**
 * KEYS: the keys' prefixes, ARGV: how many requests of each: the count of each in this second (in
 * order; a key twice is counted twice, in turn), then the microseconds left of the second.
 */
const SCRIPT = `local t = redis.call('TIME')
local out = {}
for i = 1, #KEYS do
  local k = KEYS[i] .. ':' .. t[1]
  local n = redis.call('INCRBY', k, ARGV[i])
  if n == tonumber(ARGV[i]) then redis.call('EXPIRE', k, 2) end
  out[i] = n
end
out[#KEYS + 1] = 1000000 - tonumber(t[2])
return out`;

interface Ask {
  key: string;
  n: number;
  resolve: (answer: [number, number]) => void;
  reject: (err: Error) => void;
}

/** The longest a request waits for Redis before the failure mode decides: a limiter must not be the bottleneck. */
const CALL_TIMEOUT_MS = 250;

export interface SharedLimitOptions {
  url: string;
  limit: number;
  failOpen: boolean;
  clock: Clock;
  /** Prefix of the keys in Redis (tests give each their own). */
  prefix?: string;
  log: { warn(fields: object, message: string): void; info(fields: object, message: string): void };
}

export class SharedKeyLimiter {
  private readonly client: ReturnType<typeof createClient>;
  private sha: string | undefined;
  /** Keys refused in the current window, until when (local milliseconds). */
  private readonly denied = new Map<string, number>();
  private failing = false;
  private readonly prefix: string;
  /** The asks of this turn of the event loop, sent together once it has read every request of it. */
  private asks: Ask[] = [];

  constructor(private readonly o: SharedLimitOptions) {
    this.prefix = o.prefix ?? 'toolgate:rl';
    this.client = createClient({
      url: o.url,
      // Commands fail at once while disconnected, instead of piling up in memory.
      disableOfflineQueue: true,
      socket: {
        connectTimeout: 2_000,
        reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 2_000),
      },
    });
    // Errors also surface on the calls; this listener keeps one from being thrown as unhandled.
    this.client.on('error', () => {});
    this.client.on('ready', () => {
      if (this.failing) this.o.log.info({}, 'the shared rate limit is back: Redis answers again');
      this.failing = false;
    });
  }

  /** Connects in the background: a server starts, and serves by the failure mode, while Redis is away. */
  start(): void {
    this.client.connect().catch(() => {});
  }

  async close(): Promise<void> {
    if (this.client.isOpen) await this.client.close();
    else this.client.destroy();
  }

  /**
   * Counts `n` requests of the key in this second: the state after them; null when Redis cannot
   * say and the limit fails open (the caller then counts on this server alone); throws 503 when it
   * fails closed.
   */
  hit(keyId: string, n = 1): LimitState | null | Promise<LimitState | null> {
    const now = this.o.clock.now();
    const until = this.denied.get(keyId);
    if (until !== undefined) {
      if (now < until) return this.state(this.o.limit + 1, until - now);
      this.denied.delete(keyId);
    }
    if (!this.client.isReady) return this.unavailable(new Error('not connected'));
    return this.ask(keyId, n).then(
      ([count, usLeft]) => {
        const msLeft = Math.max(1, Math.ceil(usLeft / 1000));
        if (count > this.o.limit) this.denied.set(keyId, this.o.clock.now() + msLeft);
        return this.state(count, msLeft);
      },
      (err: Error) => this.unavailable(err),
    );
  }

  private ask(keyId: string, n: number): Promise<[number, number]> {
    return new Promise((resolve, reject) => {
      if (this.asks.length === 0) setImmediate(() => void this.send());
      this.asks.push({ key: `${this.prefix}:${keyId}`, n, resolve, reject });
    });
  }

  private async send(): Promise<void> {
    const asks = this.asks;
    this.asks = [];
    const options = { keys: asks.map((a) => a.key), arguments: asks.map((a) => String(a.n)) };
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${CALL_TIMEOUT_MS} ms`)), CALL_TIMEOUT_MS);
    });
    try {
      const run = async (): Promise<unknown> => {
        this.sha ??= await this.client.scriptLoad(SCRIPT);
        try {
          return await this.client.evalSha(this.sha, options);
        } catch (err) {
          // A restarted or flushed Redis forgot the script: load it again.
          if (!String((err as Error).message).startsWith('NOSCRIPT')) throw err;
          this.sha = await this.client.scriptLoad(SCRIPT);
          return this.client.evalSha(this.sha, options);
        }
      };
      const reply = (await Promise.race([run(), timeout])) as number[];
      const usLeft = Number(reply[asks.length]);
      asks.forEach((a, i) => {
        a.resolve([Number(reply[i]), usLeft]);
      });
    } catch (err) {
      for (const a of asks) a.reject(err as Error);
    } finally {
      clearTimeout(timer);
    }
  }

  private state(count: number, msLeft: number): LimitState {
    return {
      allowed: count <= this.o.limit,
      limit: this.o.limit,
      remaining: Math.max(0, this.o.limit - count),
      resetSeconds: Math.max(1, Math.ceil(msLeft / 1000)),
    };
  }

  private unavailable(err: Error): null {
    if (!this.failing) {
      this.failing = true;
      this.o.log.warn(
        { err: err.message, fail: this.o.failOpen ? 'open' : 'closed' },
        this.o.failOpen
          ? 'the shared rate limit is unavailable (Redis): serving without it until Redis answers again'
          : 'the shared rate limit is unavailable (Redis): refusing requests until Redis answers again',
      );
    }
    if (this.o.failOpen) return null;
    throw new ApiError('unavailable', 'The rate limiter is unavailable; try again shortly.', undefined, {
      'retry-after': '1',
    });
  }
}
