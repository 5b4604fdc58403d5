/**
 * @module What one load run is given (requests, connections, seconds) and what it gives (a Sample):
 * the contract of the bench's load generator, wrk (lib/wrk.ts).
 */

export interface LoadRequest {
  method: 'POST' | 'GET';
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Which rotated key (or account) this request uses, for the per-key rate; default: its index. */
  slot?: number;
}

/** `POST /api/v1/tools/<tool>` with `{}`, once per key: the load of the scenarios that call one account tool. */
export function accountToolCalls(keys: readonly string[], tool: string): LoadRequest[] {
  return keys.map((key) => ({
    method: 'POST',
    path: `/api/v1/tools/${tool}`,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: '{}',
  }));
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
    /** The process both servers call (the proxied scenarios' upstream), when there is one. */
    helper?: number | null;
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
