/** @module The use cases, built once from their dependencies; HTTP routes and CLI commands call these. */

import type { Clock } from '../domain/clock.js';
import type { Metrics } from '../metrics/metrics.js';
import { type Reads, StoreReads } from '../store/cached-reads.js';
import type { AccountSnapshot, Store } from '../store/store.js';
import { AccountService } from './accounts.js';
import { AlertService } from './alerts.js';
import { AuditService } from './audit.js';
import { BillingService } from './billing.js';
import { CatalogueService } from './catalogue.js';
import { ConsoleService, type ConsoleServiceOptions } from './console.js';
import { now, type ServiceDeps } from './context.js';
import { type BearerCheck, KeyService } from './keys.js';
import { PaymentService } from './payments.js';
import { PlanService } from './plans.js';
import { TokenService } from './tokens.js';
import { UsageService } from './usage.js';
import type { UsageCounters } from './usage-counters.js';
import { UserService } from './users.js';
import { getAccountParts } from './views.js';
import { WebhookService } from './webhooks.js';

export type { ServiceDeps } from './context.js';

/** A snapshot's get_account answer: its parts, and the whole as last made (for `second`). */
interface Rendered {
  parts: ReturnType<typeof getAccountParts>;
  second: number;
  json: string;
}
/** The store as the health probes see it. */
export type StoreHealth = Pick<Store, 'backend' | 'ping' | 'ready'>;

const rendered = new WeakMap<AccountSnapshot, Rendered>();

export class Services {
  readonly plans: PlanService;
  readonly accounts: AccountService;
  readonly keys: KeyService;
  readonly users: UserService;
  readonly tokens: TokenService;
  readonly usage: UsageService;
  readonly audit: AuditService;
  readonly catalogue: CatalogueService;
  readonly billing: BillingService;
  readonly webhooks: WebhookService;
  /** Customer alerts: each user's choice to get the alert mails. */
  readonly alerts: AlertService;
  /** Money through Stripe: packs, Checkout, the portal, Stripe's webhook (off without a secret key). */
  readonly payments: PaymentService;
  /** Where the doors read accounts and keys on the hot path: the read cache, or the store itself. */
  readonly reads: Reads;
  readonly clock: Clock;
  /** Where the doors count for /metrics (none: nothing is counted). */
  readonly metrics: Metrics | undefined;
  /** Where tool calls are counted for the usage history (none in one-shot tools like the CLI). */
  readonly usageCounters: UsageCounters | undefined;
  /** Whether the store answers and takes writes (/healthz, /readyz). */
  readonly health: StoreHealth;

  constructor(
    private readonly deps: ServiceDeps,
    /** Bearers that are not keys (OAuth access tokens), for the key service to accept too. */
    otherBearers?: BearerCheck,
  ) {
    this.plans = new PlanService(deps);
    this.accounts = new AccountService(deps);
    this.keys = new KeyService(deps, otherBearers);
    this.users = new UserService(deps);
    this.tokens = new TokenService(deps);
    this.usage = new UsageService(deps);
    this.audit = new AuditService(deps);
    this.catalogue = new CatalogueService(deps);
    this.billing = new BillingService(deps);
    this.webhooks = new WebhookService(deps);
    this.alerts = new AlertService(deps);
    this.payments = new PaymentService(deps);
    this.reads = deps.reads;
    this.clock = deps.clock;
    this.metrics = deps.metrics;
    this.usageCounters = deps.usageCounters;
    this.health = deps.store;
  }

  /** The console's use cases (sign-in links, sessions, memberships), with the console's settings. */
  console(options: ConsoleServiceOptions): ConsoleService {
    return new ConsoleService(
      { deps: this.deps, accounts: this.accounts, users: this.users, billing: this.billing },
      options,
    );
  }

  /**
   * The `get_account` answer, as JSON: at once when the snapshot is in memory. It depends only on
   * the snapshot and the current second, and a change always gives a new snapshot object: so it is
   * made at most once per snapshot per second, and then mostly from parts kept with the snapshot
   * (only the metadata, whose resets follow the clock, is made again).
   */
  accountViewJson(accountId: string): string | undefined | Promise<string | undefined> {
    const snapshot = this.deps.reads.getSnapshot(accountId);
    if (snapshot instanceof Promise) return snapshot.then((s) => s && this.render(s));
    return snapshot && this.render(snapshot);
  }

  private render(snapshot: AccountSnapshot): string {
    const t = now(this.deps);
    const hit = rendered.get(snapshot);
    if (hit?.second === t) return hit.json;
    const parts =
      hit && t >= hit.parts.from && t < hit.parts.until ? hit.parts : getAccountParts(snapshot, t);
    const json = parts.head + parts.tail(t);
    rendered.set(snapshot, { parts, second: t, json });
    return json;
  }
}

/** `reads` defaults to the store's own, uncached (one-shot commands, tests not about the cache). */
export function createServices(
  deps: Omit<ServiceDeps, 'reads'> & Partial<Pick<ServiceDeps, 'reads'>>,
  otherBearers?: BearerCheck,
): Services {
  return new Services({ ...deps, reads: deps.reads ?? new StoreReads(deps.store) }, otherBearers);
}
