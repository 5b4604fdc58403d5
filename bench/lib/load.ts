/**
 * @module One load run with autocannon (programmatic API), the load generator when wrk is not
 * installed or `--load autocannon` is given (lib/wrk.ts is the other; both give a Sample): `connections` keep-alive connections for
 * `duration` seconds, each connection cycling through the given requests from its own starting
 * point, so the load spreads over every key/account at once. Latencies are recorded here from the
 * per-response timings (sub-millisecond; autocannon's own histogram keeps whole milliseconds).
 *
 * The load generator also counts, per rotated key (`slot`), how many answers it got in each
 * wall-clock second, and keeps the highest count: the busiest key's rate, to compare with toolgate's
 * per-key rate limit (fixed windows of one wall-clock second). Where the server says where a key
 * stands (`RateLimit: "per-key";r=<remaining>`), the lowest remaining is kept too: the limiter's own
 * count of the busiest key in its busiest window.
 */
import { createRequire } from 'node:module';
import autocannon from 'autocannon';
import { percentile } from './stats.js';

export interface LoadRequest {
  method: 'POST' | 'GET';
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Which rotated key (or account) this request uses, for the per-key rate; default: its index. */
  slot?: number;
}

export interface PerKeyRate {
  /** Distinct slots (keys or accounts) rotated over. */
  slots: number;
  /** The most answers one slot got within one wall-clock second, as the load generator counted. */
  maxPerSecond: number;
  /** From toolgate's RateLimit headers: the per-key limit and the highest count it reported. */
  limit: number | null;
  limiterMaxCount: number | null;
}

export interface Sample {
  /** Completed responses per second (all statuses; non-2xx should be 0). */
  rps: number;
  /** Latency of 2xx responses, milliseconds. */
  p50: number;
  p99: number;
  mean: number;
  /** Completed responses. */
  total: number;
  ok: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  /** Connection errors (timeouts included). */
  errors: number;
  timeouts: number;
  seconds: number;
  perKey: PerKeyRate;
  /**
   * Cores used during the run (CPU seconds / wall seconds), set by the runner: the server under
   * load, this process (the load generator), toolgate's PostgreSQL backends, and every other process
   * on the machine (noise). null: not measurable.
   */
  cpu?: {
    server: number | null;
    loadgen: number;
    database: number | null;
    others: number | null;
    /** Cores the hypervisor took away (steal): not ours, not anyone's on this machine. */
    stolen: number | null;
  };
}

export interface LoadOptions {
  connections: number;
  /** Seconds. */
  duration: number;
}

/** A request as given to autocannon, with the slot its answers count against. */
type SlottedRequest = autocannon.Request & { slot: number };

/** What autocannon's client has but its types do not show: the request it is sending now. */
interface InternalClient {
  requestIterator: { currentRequest: SlottedRequest };
  /** Emitted by its parser (http-parser-js) with the status line and the raw header list. */
  on(event: 'headers', listener: (info: { headers: string[] }) => void): void;
}

/** The version of the autocannon package the bench runs. */
export function autocannonVersion(): string {
  return (createRequire(import.meta.url)('autocannon/package.json') as { version: string }).version;
}

let current: autocannon.Instance | null = null;

/** Stops the run in progress, if any (SIGINT). */
export function stopLoad(): void {
  current?.stop();
}

export function runLoad(url: string, requests: readonly LoadRequest[], opts: LoadOptions): Promise<Sample> {
  if (requests.length === 0) throw new Error('runLoad: no requests');
  let clientIndex = 0;
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  const slotOf = requests.map((r, i) => r.slot ?? i);
  const slots = Math.max(...slotOf) + 1;
  const perSecond = new Uint32Array(slots);
  let second = -1;
  let maxPerSecond = 0;
  let limit: number | null = null;
  let minRemaining: number | null = null;
  /** One answer for `slot`; `raw` is its header list as parsed, [name, value, name, value, ...]. */
  const track = (slot: number, raw: readonly string[]) => {
    const now = Math.floor(Date.now() / 1000);
    if (now !== second) {
      perSecond.fill(0);
      second = now;
    }
    const n = ++perSecond[slot]!;
    if (n > maxPerSecond) maxPerSecond = n;
    let state: string | undefined;
    let policy: string | undefined;
    for (let h = 0; h < raw.length; h += 2) {
      const name = raw[h]!;
      // Only names of these two lengths can matter: most headers are skipped without a comparison.
      if (name.length === 9 && name.toLowerCase() === 'ratelimit') state = raw[h + 1];
      else if (name.length === 16 && limit === null && name.toLowerCase() === 'ratelimit-policy')
        policy = raw[h + 1];
    }
    if (state === undefined || !state.startsWith('"per-key"')) return;
    const at = state.indexOf(';r=');
    if (at < 0) return;
    const end = state.indexOf(';', at + 3);
    const remaining = Number(state.slice(at + 3, end < 0 ? undefined : end));
    if (Number.isFinite(remaining) && (minRemaining === null || remaining < minRemaining))
      minRemaining = remaining;
    if (limit === null) {
      const q = policy === undefined ? null : /;q=(\d+)/.exec(policy);
      if (q) limit = Number(q[1]);
    }
  };
  // Each connection's copy of a request carries the request's slot.
  const copy = (r: LoadRequest, i: number): SlottedRequest => ({
    method: r.method,
    path: r.path,
    headers: { ...r.headers },
    ...(r.body === undefined ? {} : { body: r.body }),
    slot: slotOf[i]!,
  });
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections: opts.connections,
        duration: opts.duration,
        // Every connection gets its own copy of the list, rotated so the connections start spread out.
        setupClient: (client) => {
          const offset = Math.floor((clientIndex++ * requests.length) / opts.connections) % requests.length;
          const all = requests.map(copy);
          client.setRequests([...all.slice(offset), ...all.slice(0, offset)]);
          // The answer's headers, as the client's parser gives them, against the slot of the request
          // in flight (one per connection: no pipelining). Not autocannon's onResponse: that builds a
          // header object per answer, which costs the load generator more the more headers an
          // answer has, and so would charge toolgate's own headers to the load generator.
          const internal = client as unknown as InternalClient;
          internal.on('headers', (info) => track(internal.requestIterator.currentRequest.slot, info.headers));
        },
        requests: requests.map(copy),
      },
      (err, result) => {
        current = null;
        if (err) return reject(err instanceof Error ? err : new Error(String(err)));
        const ok = result['2xx'];
        const seconds = result.duration;
        const timed = latencies.subarray(0, count).sort();
        resolve({
          rps: seconds > 0 ? result.requests.total / seconds : 0,
          p50: percentile(timed, 50),
          p99: percentile(timed, 99),
          mean: count > 0 ? timed.reduce((a, b) => a + b, 0) / count : Number.NaN,
          total: result.requests.total,
          ok,
          non2xx: result.non2xx,
          statusCodes: Object.fromEntries(
            Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, s.count ?? 0]),
          ),
          errors: result.errors,
          timeouts: result.timeouts,
          seconds,
          perKey: {
            slots,
            maxPerSecond,
            limit,
            limiterMaxCount: limit !== null && minRemaining !== null ? limit - minRemaining : null,
          },
        });
      },
    );
    current = instance;
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode < 200 || statusCode >= 300) return;
      if (count === latencies.length) {
        const bigger = new Float64Array(latencies.length * 2);
        bigger.set(latencies);
        latencies = bigger;
      }
      latencies[count++] = responseTime;
    });
  });
}
