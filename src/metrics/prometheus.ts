/**
 * @module The Prometheus series behind the Metrics interface (metrics.ts), on prom-client: loaded by
 * the server only with TOOLGATE_METRICS_PORT.
 */
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import type { DeliveryOutcome, Metrics, Surface } from './metrics.js';

/** Latency buckets in seconds: a cached get_account is well under a millisecond, a proxied call up to its timeout. */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

interface RequestSeries {
  count: { inc(): void };
  latency: { observe(v: number): void };
}

export class PrometheusMetrics implements Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'tool' | 'surface' | 'status'>;
  private readonly latency: Histogram<'tool' | 'surface'>;
  private readonly consumptions: Counter<'outcome'>;
  private readonly upstreamCalls: Counter<'tool' | 'outcome'>;
  private readonly deliveries: Counter<'outcome'>;
  private readonly storeErrors: Counter;
  private readonly denials: Counter<'limit'>;
  /**
   * The labelled children already made, by their label values: prom-client hashes the values on
   * every labels() call, a Map lookup on a key made once per series is cheaper on the hot path.
   */
  private readonly series = new Map<string, RequestSeries>();

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'toolgate_' });
    this.requests = new Counter({
      name: 'toolgate_requests_total',
      help: 'Tool calls answered, by tool, door (http or mcp) and HTTP status.',
      labelNames: ['tool', 'surface', 'status'],
      registers,
    });
    this.latency = new Histogram({
      name: 'toolgate_request_duration_seconds',
      help: 'Time to answer a tool call, by tool and door.',
      labelNames: ['tool', 'surface'],
      buckets: BUCKETS,
      registers,
    });
    this.consumptions = new Counter({
      name: 'toolgate_consumptions_total',
      help: 'Metered consumptions by outcome: committed, replayed, exceeded, insufficient, idempotency_conflict, not_found.',
      labelNames: ['outcome'],
      registers,
    });
    this.upstreamCalls = new Counter({
      name: 'toolgate_upstream_calls_total',
      help: 'Calls of catalogue tools to their upstream, by tool and outcome: answered, rejected, upstream_error, upstream_timeout.',
      labelNames: ['tool', 'outcome'],
      registers,
    });
    this.deliveries = new Counter({
      name: 'toolgate_webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome: delivered, retried (failed, to be tried again), failed (for good).',
      labelNames: ['outcome'],
      registers,
    });
    this.storeErrors = new Counter({
      name: 'toolgate_store_errors_total',
      help: 'Requests the database failed (answered 503 unavailable).',
      registers,
    });
    this.denials = new Counter({
      name: 'toolgate_rate_limited_total',
      help: 'Requests refused by a rate limit: per-key, or auth-failures (an address that failed authentication too often).',
      labelNames: ['limit'],
      registers,
    });
  }

  request(tool: string, surface: Surface, status: number, seconds: number): void {
    const key = `${tool}\0${surface}\0${status}`;
    let s = this.series.get(key);
    if (!s) {
      s = {
        count: this.requests.labels(tool, surface, String(status)),
        latency: this.latency.labels(tool, surface),
      };
      this.series.set(key, s);
    }
    s.count.inc();
    s.latency.observe(seconds);
  }

  consumption(outcome: string): void {
    this.consumptions.labels(outcome).inc();
  }

  upstream(tool: string, outcome: string): void {
    this.upstreamCalls.labels(tool, outcome).inc();
  }

  webhookDelivery(outcome: DeliveryOutcome): void {
    this.deliveries.labels(outcome).inc();
  }

  storeError(): void {
    this.storeErrors.inc();
  }

  rateLimited(limit: 'per-key' | 'auth-failures'): void {
    this.denials.labels(limit).inc();
  }
}
