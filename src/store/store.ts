/**
 * @module The Store contract: everything the domain needs from a database, as one sub-store per
 * kind of data (plans, accounts, keys, users, the ledger, usage, the audit trail, the catalogue,
 * usage history, webhooks, customer alerts, the console, OAuth) and the lifecycle on the Store
 * itself. One implementation per backend (store/sqlite, store/postgres); one contract test suite per
 * sub-store runs against each. A store remembers nothing of the database between calls: it reports what
 * each write changed (changes.ts).
 *
 * Every method that changes something takes an optional audit entry last. It is written in the
 * same transaction as the change, and only if the change took effect: a refusal, an idempotent
 * replay, a revoke of a revoked key or a duplicate user writes none. So an action is never kept
 * without its entry, nor an entry without its action.
 */

import type { AuditEntry } from '../domain/audit.js';
import type { ToolDefinition } from '../domain/catalogue.js';
import type { EpochSeconds } from '../domain/clock.js';
import type { Plan } from '../domain/plans.js';
import type { CountsByUnit, UsageGrouping, UsageRow } from '../domain/usage-history.js';
import type { HourGroup, HourRow } from '../domain/usage-hours.js';
import type { UserRole } from '../domain/users.js';
import type { DeliveryStatus, WebhookDelivery, WebhookEndpoint, WebhookEvent } from '../domain/webhooks.js';
import type { AccountStore } from './accounts-store.js';
import type { AlertStore } from './alerts-store.js';
import type { AuditStore } from './audit-store.js';
import type { KeyStore } from './keys-store.js';
import type { LedgerStore } from './ledger-store.js';
import type { OAuthStore } from './oauth-store.js';
import type { Page } from './page.js';
import type { PaymentStore } from './payments-store.js';
import type { PlanStore } from './plans-store.js';
import type { UsageStore } from './usage-store.js';
import type { UserStore } from './users-store.js';

export type { AccountPatch, AccountSnapshot, AccountStore } from './accounts-store.js';
export type {
  AlertMailRecord,
  AlertMailResult,
  AlertMailStatus,
  AlertStore,
  DueAlertMail,
} from './alerts-store.js';
export type { AuditQuery, AuditStore } from './audit-store.js';
export type { KeyEntry, KeyStore } from './keys-store.js';
export type { LedgerAppend, LedgerOutcome, LedgerStore } from './ledger-store.js';
export type { OAuthStore } from './oauth-store.js';
export type { Page } from './page.js';
export type {
  EventOutcome,
  PackPayment,
  PaymentApplied,
  PaymentChange,
  PaymentStore,
  StripeEventRecord,
} from './payments-store.js';
export type { PlanStore } from './plans-store.js';
export { chargeEntry, type UsageCommit, type UsageOutcome, type UsageStore } from './usage-store.js';
export type { GuardRefusal, MemberGuard, UserRemoval, UserStore } from './users-store.js';

/** A catalogue tool as stored. */
export interface StoredTool {
  definition: ToolDefinition;
  createdAt: EpochSeconds;
  updatedAt: EpochSeconds;
}

/** What became of each tool of a `put`, in the order given. */
export type ToolPutOutcome = 'created' | 'updated' | 'unchanged';

/**
 * The tool catalogue, shared by every server like the plans. One revision number for the whole
 * catalogue is raised by every change, in the change's transaction: a server compares it with the
 * revision it compiled to know whether it is out of date.
 */
export interface CatalogueStore {
  revision(): Promise<number>;
  /** Every tool, by name, with the revision they make up (read in one statement: never a mix of two). */
  list(): Promise<{ revision: number; tools: StoredTool[] }>;
  get(name: string): Promise<StoredTool | undefined>;
  /**
   * Creates or replaces every tool given, all in one transaction. A tool whose definition is
   * unchanged is left as it was (not audited, not a change); `audits[i]` is written only when tool
   * i changed. The revision is raised once when anything changed.
   */
  put(
    tools: readonly ToolDefinition[],
    now: EpochSeconds,
    audits?: readonly (AuditEntry | undefined)[],
  ): Promise<{ revision: number; outcomes: ToolPutOutcome[] }>;
  /** Removes the tool (audited, and the revision raised, only when there was one). */
  remove(name: string, audit?: AuditEntry): Promise<StoredTool | undefined>;
}

/** One group of a usage history: a day, a key id or a tool, and its summed counts. */
export type UsageGroup = CountsByUnit & { group: string };

/**
 * The per-day usage rollup, and the last days by the hour. Servers add their counts to it (additive
 * upserts, so any number of servers add up); it is read summed by day, key or tool, or by the hour
 * for one day, and pruned by age.
 */
export interface UsageHistoryStore {
  /**
   * Adds every row's counts to the row of the same account, day, key, tool and surface, and every
   * hour's to the row of the same account, day and hour (each key once in `hours`), in one transaction.
   */
  add(rows: readonly UsageRow[], hours?: readonly HourRow[]): Promise<void>;
  /** The account's counts from `from` to `to` (days, both included), summed by `by`, in group order. */
  history(accountId: string, from: string, to: string, by: UsageGrouping): Promise<UsageGroup[]>;
  /** The account's hours of `day` that have counts, in hour order. */
  hours(accountId: string, day: string): Promise<HourGroup[]>;
  /** Deletes the rows of days before `day`; how many. */
  prune(day: string): Promise<number>;
  /** Deletes the hours of days before `day`; how many. */
  pruneHours(day: string): Promise<number>;
}

/** A delivery due, leased to the caller, with what it takes to send it. */
export interface DueDelivery {
  delivery: WebhookDelivery;
  url: string;
  secret: string;
  body: string;
  /** When the event was recorded (the delivery's webhook-timestamp is when it is sent). */
  eventAt: EpochSeconds;
}

/** What became of an attempt: delivered, failed for good, or to be tried again at `nextAttemptAt`. */
export interface DeliveryResult {
  status: DeliveryStatus;
  nextAttemptAt: EpochSeconds | null;
  statusCode: number | null;
  error: string | null;
}

/**
 * Webhooks: endpoints, the outbox of events and the deliveries. Events are recorded by the writes
 * that cause them (consumptions, ledger moves, keys, account status), in their transactions; this
 * store fans them out to the endpoints that want them and leases deliveries to one server at a time.
 */
export interface WebhookStore {
  addEndpoint(endpoint: WebhookEndpoint, secret: string, audit?: AuditEntry): Promise<void>;
  listEndpoints(): Promise<WebhookEndpoint[]>;
  getEndpoint(id: string): Promise<WebhookEndpoint | undefined>;
  /** Removes the endpoint and its deliveries (audited only when there was one). */
  removeEndpoint(id: string, audit?: AuditEntry): Promise<WebhookEndpoint | undefined>;
  /**
   * Gives the events not yet fanned out (oldest first, at most `limit`) a delivery for each endpoint
   * that wants them, due at `now`, and those owners are mailed about a mail for each owner who wants
   * them (AlertStore), in one transaction; how many events it took.
   */
  fanOut(now: EpochSeconds, newDeliveryId: () => string, limit: number): Promise<number>;
  /**
   * Leases up to `limit` due deliveries (pending, due by `now`, not leased or their lease run out)
   * to `leaseToken` until `leaseUntil`, each to one caller only, however many servers ask at once.
   */
  claim(
    now: EpochSeconds,
    leaseToken: string,
    leaseUntil: EpochSeconds,
    limit: number,
  ): Promise<DueDelivery[]>;
  /** Records an attempt's result, only while the lease is still the caller's; whether it was. */
  settle(id: string, leaseToken: string, result: DeliveryResult, now: EpochSeconds): Promise<boolean>;
  /**
   * Records an event meant for one endpoint only (a `webhook.test`: never fanned out) with its one
   * delivery, due now and leased to `lease.token` until `lease.until`, so that the caller sends it at
   * once and settles it; audited. Undefined when there is no such endpoint (nothing recorded).
   */
  addLeasedDelivery(
    event: WebhookEvent,
    delivery: { id: string; endpointId: string },
    lease: { token: string; until: EpochSeconds },
    audit?: AuditEntry,
  ): Promise<DueDelivery | undefined>;
  listDeliveries(endpointId: string, page: Page): Promise<WebhookDelivery[]>;
  getDelivery(id: string): Promise<WebhookDelivery | undefined>;
  /** Makes the delivery due again now, with a fresh schedule (audited when there was one). */
  replay(id: string, now: EpochSeconds, audit?: AuditEntry): Promise<WebhookDelivery | undefined>;
  /**
   * Deletes finished deliveries, events none waits for, and customer alert mails (whatever their
   * status), older than `before`; how many deliveries.
   */
  prune(before: EpochSeconds): Promise<number>;
  /** Every event recorded, oldest first (tests and the CLI's view of the outbox). */
  events(page: Page): Promise<WebhookEvent[]>;
}

/** A console sign-in link as stored: the token's hash only; used once, before it expires. */
export interface ConsoleLink {
  tokenHash: string;
  email: string;
  /** The account it leads into (an invitation, or an operator's link for one account); null: any. */
  accountId: string | null;
  purpose: 'sign-in' | 'invite';
  /** A path on this origin to go to after signing in (the OAuth consent, for one). */
  returnTo: string | null;
  createdAt: EpochSeconds;
  expiresAt: EpochSeconds;
  usedAt: EpochSeconds | null;
}

/** A console session as stored: the cookie value's hash only. */
export interface ConsoleSessionRecord {
  /** `ses_…`: what audit entries and grants may name (never the cookie value). */
  id: string;
  tokenHash: string;
  email: string;
  createdAt: EpochSeconds;
  lastSeenAt: EpochSeconds;
}

/** One account an email belongs to, as a user of it. */
export interface ConsoleMembership {
  accountId: string;
  accountName: string;
  userId: string;
  role: UserRole;
}

/** The console's own data: sign-in links and sessions, and who an email is across accounts. */
export interface ConsoleStore {
  addLink(link: ConsoleLink, audit?: AuditEntry): Promise<void>;
  /**
   * Marks the link used, in one conditional statement: only one caller ever gets it, and only while
   * unused and not expired at `now`. Undefined otherwise (unknown, used, or expired).
   */
  useLink(tokenHash: string, now: EpochSeconds): Promise<ConsoleLink | undefined>;
  /** The link, while unused and not expired at `now`, without using it (what a sign-in would be). */
  findLink(tokenHash: string, now: EpochSeconds): Promise<ConsoleLink | undefined>;
  addSession(session: ConsoleSessionRecord, audit?: AuditEntry): Promise<void>;
  getSession(tokenHash: string): Promise<ConsoleSessionRecord | undefined>;
  /** Moves last_seen_at forward (never back). */
  touchSession(id: string, at: EpochSeconds): Promise<void>;
  /** Whether there was such a session (audited only then). */
  endSession(id: string, audit?: AuditEntry): Promise<boolean>;
  /** Ends every session of the email; how many. */
  endSessionsOf(email: string): Promise<number>;
  /** The accounts the email is a user of, by account id. */
  memberships(email: string): Promise<ConsoleMembership[]>;
  /** Deletes links expired before `now` and sessions idle since `idleBefore` or made before `createdBefore`. */
  prune(now: EpochSeconds, idleBefore: EpochSeconds, createdBefore: EpochSeconds): Promise<void>;
}

/** Where a store's warnings go (a server's log): a message, and fields to log with it. */
export type Warn = (message: string, fields: Record<string, unknown>) => void;

export interface Store {
  readonly backend: 'sqlite' | 'postgres';

  /**
   * Whether every change committed so far, by this process or any other, has been reported to the
   * store's observer (changes.ts). When it turns true again after being false, the store reports
   * `'all'` first. Synchronous and cheap.
   */
  inSync(): boolean;

  /** Applies the numbered migrations not yet applied; seeds `plans` into an empty catalogue. */
  migrate(plans: readonly Plan[], now: EpochSeconds): Promise<{ applied: string[] }>;
  /** Throws StoreUnavailableError when the database cannot be reached. */
  ping(): Promise<void>;
  /**
   * Throws StoreUnavailableError while the store refuses writes (database down, disk full): after
   * a write refused as unavailable, until a small probe write goes through; otherwise as ping().
   */
  ready(): Promise<void>;
  close(): Promise<void>;

  readonly plans: PlanStore;
  readonly accounts: AccountStore;
  readonly keys: KeyStore;
  readonly users: UserStore;
  readonly ledger: LedgerStore;
  readonly usage: UsageStore;
  readonly audit: AuditStore;
  readonly catalogue: CatalogueStore;
  readonly usageHistory: UsageHistoryStore;
  readonly webhooks: WebhookStore;
  readonly console: ConsoleStore;
  readonly oauth: OAuthStore;
  readonly payments: PaymentStore;
  readonly alerts: AlertStore;
}
