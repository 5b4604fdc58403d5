/**
 * @module What toolgate counts for an operator's Prometheus: one interface the request path, the
 * store's callers, the upstream forwarder, the rate limiter and the webhook dispatcher report to.
 * Without TOOLGATE_METRICS_PORT the no-op one is used and nothing is counted. Label values are
 * bounded: tool names only as the registry knows them (any other name is `unknown`), statuses and
 * outcomes from closed lists; never a key, an account or any other id. The Prometheus one is in
 * prometheus.ts, loaded only when metrics are on (prom-client weighs some 11 MiB of memory).
 */

export type Surface = 'http' | 'mcp';
export type DeliveryOutcome = 'delivered' | 'retried' | 'failed';

export interface Metrics {
  /** A tool call answered: its tool (as the registry knows it, else `unknown`), door, HTTP status and duration. */
  request(tool: string, surface: Surface, status: number, seconds: number): void;
  /** A consumption's outcome as the store decided it (committed, replayed, exceeded, insufficient, …). */
  consumption(outcome: string): void;
  /** An upstream call of a catalogue tool: `answered`, `rejected` (a 4xx), `upstream_error`, `upstream_timeout`. */
  upstream(tool: string, outcome: string): void;
  webhookDelivery(outcome: DeliveryOutcome): void;
  /** The database failed a request (answered 503). */
  storeError(): void;
  /** A request refused by a rate limit: `per-key` or `auth-failures`. */
  rateLimited(limit: 'per-key' | 'auth-failures'): void;
}

const noop = () => {};
export const NO_METRICS: Metrics = {
  request: noop,
  consumption: noop,
  upstream: noop,
  webhookDelivery: noop,
  storeError: noop,
  rateLimited: noop,
};
