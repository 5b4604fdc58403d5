/**
 * @module One load run with autocannon (programmatic API): `connections` keep-alive connections for
 * `duration` seconds, each connection cycling through the given requests from its own starting
 * point, so the load spreads over every key/account at once. Latencies are recorded here from the
 * per-response timings (sub-millisecond; autocannon's own histogram keeps whole milliseconds).
 */
import autocannon from 'autocannon';
import { percentile } from './stats.js';

export interface LoadRequest {
  method: 'POST' | 'GET';
  path: string;
  headers: Record<string, string>;
  body?: string;
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
  /**
   * Cores used during the run (CPU seconds / wall seconds), set by the runner: the server under
   * load, this process (the load generator), toolgate's PostgreSQL backends, and every other process
   * on the machine (noise). null: not measurable.
   */
  cpu?: { server: number | null; loadgen: number; database: number | null; others: number | null };
}

export interface LoadOptions {
  connections: number;
  /** Seconds. */
  duration: number;
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
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections: opts.connections,
        duration: opts.duration,
        // Every connection gets its own copy of the list, rotated so the connections start spread out.
        setupClient: (client) => {
          const offset = Math.floor((clientIndex++ * requests.length) / opts.connections) % requests.length;
          client.setRequests(
            [...requests.slice(offset), ...requests.slice(0, offset)].map((r) => ({
              ...r,
              headers: { ...r.headers },
            })),
          );
        },
        requests: requests.map((r) => ({ ...r, headers: { ...r.headers } })),
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
