/**
 * @module The PostgreSQL store (pg, one pool per process) for many stateless servers on one
 * database: builds the sub-stores on one pool and owns the lifecycle. Every write is one
 * transaction under READ COMMITTED; consumption and charges are conditional statements that
 * PostgreSQL re-evaluates on the locked row, so they stay exact across servers. Idempotency keys
 * are serialised with a transaction-scoped advisory lock.
 */
import type { EpochSeconds } from '../../domain/clock.js';
import type { Plan } from '../../domain/plans.js';
import type { Store } from '../store.js';
import { PgAccounts } from './accounts.js';
import { PgAlerts } from './alerts.js';
import { PgApiKeys } from './api-keys.js';
import { PgAudit } from './audit.js';
import { PgCatalogue } from './catalogue.js';
import { ChangeFeed } from './change-feed.js';
import { PgConsole } from './console.js';
import { PgGroupCommit } from './consumption.js';
import { createPool, guard, type PgPool, type PostgresOptions, quoteIdent } from './driver.js';
import { PgLedger } from './ledger.js';
import { PgOAuth } from './oauth.js';
import { PgPayments } from './payments.js';
import { PgPlans } from './plans.js';
import { migrate } from './schema.js';
import { PgTransactions } from './transactions.js';
import { PgUsageHistory } from './usage-history.js';
import { PgUsers } from './users.js';
import { PgWebhooks } from './webhooks.js';

export class PostgresStore implements Store {
  readonly backend = 'postgres' as const;
  private readonly pool: PgPool;
  private readonly schema: string;
  private readonly feed: ChangeFeed;
  private readonly t: PgTransactions;
  readonly plans: PgPlans;
  readonly accounts: PgAccounts;
  readonly keys: PgApiKeys;
  readonly users: PgUsers;
  readonly ledger: PgLedger;
  readonly usage: PgGroupCommit;
  readonly audit: PgAudit;
  readonly catalogue: PgCatalogue;
  readonly usageHistory: PgUsageHistory;
  readonly webhooks: PgWebhooks;
  readonly oauth: PgOAuth;
  readonly payments: PgPayments;
  readonly console: PgConsole;
  readonly alerts: PgAlerts;

  constructor(options: PostgresOptions) {
    this.schema = options.schema ?? 'public';
    quoteIdent(this.schema);
    this.pool = createPool(options);
    // Every process on the database notifies its writes; one without an observer is not waited for.
    this.feed = new ChangeFeed({
      url: options.url,
      channel: `toolgate_${this.schema}`.slice(0, 63),
      connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
      observer: options.observer,
      warn: options.warn,
    });
    void this.feed.start();
    this.t = new PgTransactions(this.pool, this.feed, options.observer, options.warn);
    this.plans = new PgPlans(this.t);
    this.accounts = new PgAccounts(this.t);
    this.keys = new PgApiKeys(this.t);
    this.users = new PgUsers(this.t);
    this.ledger = new PgLedger(this.t);
    this.usage = new PgGroupCommit(this.t);
    this.audit = new PgAudit(this.t);
    this.catalogue = new PgCatalogue(this.t);
    this.usageHistory = new PgUsageHistory(this.t);
    this.webhooks = new PgWebhooks(this.t);
    this.oauth = new PgOAuth(this.t);
    this.payments = new PgPayments(this.t);
    this.console = new PgConsole(this.t);
    this.alerts = new PgAlerts(this.t);
  }

  /** In sync only while the change feed is proven alive. */
  inSync(): boolean {
    return this.feed.healthy();
  }

  async migrate(plans: readonly Plan[], now: EpochSeconds): Promise<{ applied: string[] }> {
    await guard(() => this.pool.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(this.schema)}`)).catch(
      (err: { code?: string }) => {
        // IF NOT EXISTS does not hold between two servers creating it at the same moment: the
        // slower one meets the catalogue's unique index (23505) or the schema itself (42P06).
        if (err.code !== '23505' && err.code !== '42P06') throw err;
      },
    );
    return migrate(this.t, plans, now);
  }

  async ping(): Promise<void> {
    await guard(() => this.pool.query('SELECT 1'));
  }

  /**
   * A ping while writes go through. Once one was refused as unavailable, a probe write instead: a
   * row rewritten as it is (a new row version in the table and the WAL, like any small write).
   */
  async ready(): Promise<void> {
    if (!this.t.refusal) return this.ping();
    await guard(() =>
      this.pool.query('UPDATE schema_migrations SET applied_at = applied_at WHERE version = 1'),
    );
    this.t.refusal = undefined;
  }

  async close(): Promise<void> {
    await this.feed.stop();
    await this.pool.end().catch(() => {});
  }

  /** Drops this store's schema and everything in it: for scratch schemas in tests. */
  async dropSchema(): Promise<void> {
    if (this.schema === 'public') throw new Error('Refusing to drop the public schema.');
    await this.pool.query(`DROP SCHEMA IF EXISTS ${quoteIdent(this.schema)} CASCADE`);
  }
}
