/**
 * @module The per-key rate limit shared by every server through Redis (TOOLGATE_REDIS_URL): the
 * sliding window of domain/rate-limit.ts, the same rule, kept per key in one Redis value (the
 * counts and last request times of its last SLOTS + 1 slots, in MessagePack: a hash's fields cost
 * the script three times as much) and judged by a script on Redis's clock, so that servers with drifting clocks share one window. A key refused is refused locally
 * until the script said a retry could pass, without asking Redis again. The requests of one turn of
 * the event loop ask together, in one script call: a call costs the client some 15 µs of CPU
 * whatever it carries (docs/performance.md). Redis unreachable: requests are served under this
 * server's own limit (TOOLGATE_REDIS_FAIL=open, the default) or refused with 503 (closed), logged
 * once; the client reconnects by itself and the shared limit comes back without a restart.
 */
import { createClient } from 'redis';
import { ApiError } from '../domain/api-error.js';
import type { Clock } from '../domain/clock.js';
import { type LimitState, SLOTS } from '../domain/rate-limit.js';

/**
 * KEYS: the keys' values. ARGV: the limit, the limit plus a tenth, a slot's milliseconds, SLOTS,
 * then how many requests of each key (in order; a key twice is judged twice, in turn). Per key,
 * three numbers: 1 if admitted (all its requests, or none), the requests in the window's last
 * SLOTS slots, and the milliseconds until the window forgets them (admitted) or until a retry can
 * pass (refused).
 */
const SCRIPT = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit, ceiling, slotMs, S = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local N = S + 1
local windowMs = S * slotMs
local slot = math.floor(now / slotMs)
local C, T = 3, 3 + N
local out = {}
for k = 1, #KEYS do
  local n = tonumber(ARGV[4 + k])
  local raw = redis.call('GET', KEYS[k])
  -- v: the latest slot, the requests of the last S slots, of all N, then each slot's count and last time
  local v
  if raw then v = cmsgpack.unpack(raw) end
  if not v or slot - v[1] >= N then
    v = {slot, 0, 0}
    for i = 1, 2 * N do v[3 + i] = 0 end
  end
  for next = v[1] + 1, slot do
    v[2] = v[2] - v[C + 1 + (next - S) % N]
    local i = 1 + next % N
    v[3] = v[3] - v[C + i]
    v[C + i] = 0
    v[T + i] = 0
  end
  if slot > v[1] then v[1] = slot end
  local span = v[2]
  if v[T + 1 + (v[1] + 1) % N] > now - windowMs then span = v[3] end
  local ms = N * slotMs
  local admitted = 0
  if v[2] + n <= limit and span + n <= ceiling then
    admitted = 1
    local i = 1 + v[1] % N
    v[C + i] = v[C + i] + n
    if now > v[T + i] then v[T + i] = now end
    v[2] = v[2] + n
    v[3] = v[3] + n
    redis.call('SET', KEYS[k], cmsgpack.pack(v), 'PX', 2 * N * slotMs)
    ms = (v[1] + S) * slotMs - now
  else
    -- When n more would fit, as slots leave: the first rule counts the slots after v[1] + s - S.
    for s = 1, N do
      local at = (v[1] + s) * slotMs
      local r = 0
      for j = math.max(v[1] + s - S + 1, v[1] - S), v[1] do r = r + v[C + 1 + j % N] end
      if r + n <= limit then
        local o = v[1] + s - S
        local oc, ol = 0, 0
        if o >= v[1] - S then oc, ol = v[C + 1 + o % N], v[T + 1 + o % N] end
        if r + oc + n <= ceiling then ms = at - now; break end
        if r + n <= ceiling then ms = math.max(at, ol + windowMs) - now; break end
      end
    end
  end
  out[3 * k - 2] = admitted
  out[3 * k - 1] = v[2]
  out[3 * k] = ms
end
return out`;

/** What the script says of one key's requests. */
interface Verdict {
  admitted: boolean;
  recent: number;
  ms: number;
}

interface Ask {
  key: string;
  n: number;
  resolve: (answer: Verdict) => void;
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
  /** Keys refused, until when a retry could pass (local milliseconds). */
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
   * `n` requests of the key, admitted all or none: the state after them; null when Redis cannot
   * say and the limit fails open (the caller then counts on this server alone); throws 503 when it
   * fails closed.
   */
  hit(keyId: string, n = 1): LimitState | null | Promise<LimitState | null> {
    const now = this.o.clock.now();
    const until = this.denied.get(keyId);
    if (until !== undefined) {
      if (now < until) return this.state({ admitted: false, recent: this.o.limit, ms: until - now });
      this.denied.delete(keyId);
    }
    if (!this.client.isReady) return this.unavailable(new Error('not connected'));
    return this.ask(keyId, n).then(
      (verdict) => {
        if (!verdict.admitted) this.denied.set(keyId, this.o.clock.now() + verdict.ms);
        return this.state(verdict);
      },
      (err: Error) => this.unavailable(err),
    );
  }

  private ask(keyId: string, n: number): Promise<Verdict> {
    return new Promise((resolve, reject) => {
      if (this.asks.length === 0) setImmediate(() => void this.send());
      this.asks.push({ key: `${this.prefix}:${keyId}`, n, resolve, reject });
    });
  }

  private async send(): Promise<void> {
    const asks = this.asks;
    this.asks = [];
    const { limit } = this.o;
    const head = [limit, limit + Math.floor(limit / 10), 1000 / SLOTS, SLOTS].map(String);
    const options = { keys: asks.map((a) => a.key), arguments: [...head, ...asks.map((a) => String(a.n))] };
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
      asks.forEach((a, i) => {
        const [admitted, recent, ms] = reply.slice(3 * i, 3 * i + 3).map(Number);
        a.resolve({ admitted: admitted === 1, recent: recent ?? 0, ms: ms ?? 0 });
      });
    } catch (err) {
      for (const a of asks) a.reject(err as Error);
    } finally {
      clearTimeout(timer);
    }
  }

  private state(v: Verdict): LimitState {
    return {
      allowed: v.admitted,
      limit: this.o.limit,
      remaining: Math.max(0, this.o.limit - v.recent),
      resetSeconds: Math.max(1, Math.ceil(v.ms / 1000)),
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
