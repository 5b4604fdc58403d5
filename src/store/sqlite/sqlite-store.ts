/**
 * @module The embedded SQLite store (better-sqlite3): builds the sub-stores on one executor and
 * owns the lifecycle. WAL journal: a write is answered only once it is on disk, so it survives a
 * crash of the process and of the machine (executor.ts, wal-sync.ts). Writes run in BEGIN
 * IMMEDIATE transactions, so concurrent processes on one file serialise on the write lock;
 * consumptions are committed in groups (group-commit.ts).
 */
import type { EpochSeconds } from '../../domain/clock.js';
import type { Plan } from '../../domain/plans.js';
import type { Store } from '../store.js';
import { SqliteAccounts } from './accounts.js';
import { SqliteAlerts } from './alerts.js';
import { SqliteApiKeys } from './api-keys.js';
import { SqliteAudit } from './audit.js';
import { SqliteCatalogue } from './catalogue.js';
import type { Checkpointer } from './checkpointer.js';
import { SqliteConsole } from './console.js';
import { makePrivate } from './driver.js';
import { type ExecutorOptions, SqliteExecutor } from './executor.js';
import { FairUseSql } from './fair-use-sql.js';
import { GroupCommit } from './group-commit.js';
import { SqliteLedger } from './ledger.js';
import { SqliteOAuth } from './oauth.js';
import { SqlitePayments } from './payments.js';
import { SqlitePlans } from './plans.js';
import { migrate } from './schema.js';
import { SqliteUsageHistory } from './usage-history.js';
import { SqliteUsers } from './users.js';
import type { WalSync } from './wal-sync.js';
import { SqliteWebhooks } from './webhooks.js';
import type { SqliteWriter } from './writer.js';

export type SqliteStoreOptions = ExecutorOptions;

export class SqliteStore implements Store {
  readonly backend = 'sqlite' as const;
  private readonly x: SqliteExecutor;
  readonly plans: SqlitePlans;
  readonly accounts: SqliteAccounts;
  readonly keys: SqliteApiKeys;
  readonly users: SqliteUsers;
  readonly ledger: SqliteLedger;
  /** Consumptions are committed in groups (group-commit.ts). */
  readonly usage: GroupCommit;
  readonly audit: SqliteAudit;
  readonly catalogue: SqliteCatalogue;
  readonly usageHistory: SqliteUsageHistory;
  readonly webhooks: SqliteWebhooks;
  readonly oauth: SqliteOAuth;
  readonly payments: SqlitePayments;
  readonly console: SqliteConsole;
  readonly alerts: SqliteAlerts;

  constructor(options: SqliteStoreOptions) {
    makePrivate(options.path);
    this.x = new SqliteExecutor(options);
    const windows = new FairUseSql(this.x);
    this.plans = new SqlitePlans(this.x);
    this.accounts = new SqliteAccounts(this.x, windows);
    this.keys = new SqliteApiKeys(this.x);
    this.users = new SqliteUsers(this.x);
    this.ledger = new SqliteLedger(this.x);
    this.usage = new GroupCommit(this.x, windows);
    this.audit = new SqliteAudit(this.x);
    this.catalogue = new SqliteCatalogue(this.x);
    this.usageHistory = new SqliteUsageHistory(this.x);
    this.webhooks = new SqliteWebhooks(this.x);
    this.oauth = new SqliteOAuth(this.x);
    this.payments = new SqlitePayments(this.x);
    this.console = new SqliteConsole(this.x);
    this.alerts = new SqliteAlerts(this.x);
  }

  migrate(plans: readonly Plan[], now: EpochSeconds): Promise<{ applied: string[] }> {
    return migrate(this.x, plans, now);
  }

  /** The writer thread of a serving process, once started (diagnostics and tests). */
  get writer(): SqliteWriter | undefined {
    return this.x.writer;
  }

  /** fdatasyncs of the WAL done so far, each making the commits before it durable (diagnostics). */
  get walSyncs(): number {
    return this.x.walSync?.syncs ?? 0;
  }

  /** The WAL's fdatasyncs, for tests that hold one to see what waits for it. */
  get walSync(): WalSync | undefined {
    return this.x.walSync;
  }

  /** The background checkpoints of a serving process (diagnostics and tests). */
  get checkpointer(): Checkpointer | undefined {
    return this.x.checkpointer;
  }

  inSync(): boolean {
    return this.x.inSync();
  }

  ping(): Promise<void> {
    return this.x.ping();
  }

  ready(): Promise<void> {
    return this.x.ready();
  }

  close(): Promise<void> {
    return this.x.close();
  }
}
