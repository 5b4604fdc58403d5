/** @module What every use case is given, once: the store, the clock, the key settings (who acts is given per call). */
import { type Clock, nowSeconds } from '../domain/clock.js';
import type { UnpaidPolicy } from '../domain/payments.js';
import type { Metrics } from '../metrics/metrics.js';
import type { PaymentProvider } from '../payments/provider.js';
import type { Reads } from '../store/cached-reads.js';
import type { Store } from '../store/store.js';
import type { KeyUsageRecorder } from './key-usage.js';
import type { UsageCounters } from './usage-counters.js';

export interface ServiceDeps {
  store: Store;
  /** Where the hot path's reads go: the read cache in front of the store, or the store itself. */
  reads: Reads;
  clock: Clock;
  /** `TOOLGATE_KEY_PREFIX`: the part before the underscore of every key. */
  keyPrefix: string;
  /** HMAC secret for key digests: new keys, and the digest every key ends up under. */
  keySecret: string;
  /** Secrets being rotated out: keys made under them still authenticate, and are re-digested under keySecret. */
  previousKeySecrets?: readonly string[];
  /** Where successful authentications are noted (last_used_at); none in one-shot tools like the CLI. */
  keyUsage?: KeyUsageRecorder;
  /** Where tool calls are counted for the usage history; none in one-shot tools like the CLI. */
  usageCounters?: UsageCounters;
  /** Called after this process changed the tool catalogue, so that it serves the change at once. */
  catalogueChanged?: () => Promise<void>;
  /** TOOLGATE_UPSTREAM_ENV: the only variables a catalogue's header placeholders may name; none when unset. */
  upstreamEnv?: readonly string[];
  /** The fair-use thresholds webhook endpoints want, per account: carried into each consumption. */
  webhookInterest?: { thresholdsFor(accountId: string): readonly number[] | undefined };
  /** TOOLGATE_WEBHOOK_ALLOW_PRIVATE: endpoints may be loopback or private addresses. */
  webhookAllowPrivate?: boolean;
  /** Called after this process changed the webhook endpoints (so its threshold cache follows at once). */
  webhooksChanged?: () => Promise<void>;
  /** Called after a delivery was made due (a replay), so this server's dispatcher sends it now. */
  webhookWake?: () => void;
  /** Where counts for /metrics go (TOOLGATE_METRICS_PORT); none: nothing is counted. */
  metrics?: Metrics;
  /** Money through Stripe (TOOLGATE_STRIPE_*); none: payments are off. */
  payments?: PaymentDeps;
}

/** What money needs besides the store: the provider, and where ended subscriptions go. */
export interface PaymentDeps {
  provider: PaymentProvider;
  /** TOOLGATE_STRIPE_FALLBACK_PLAN. */
  fallbackPlan: string;
  /** TOOLGATE_STRIPE_UNPAID. */
  unpaid: UnpaidPolicy;
}

export const now = (deps: Pick<ServiceDeps, 'clock'>) => nowSeconds(deps.clock);

export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 500;
