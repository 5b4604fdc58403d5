/**
 * @module The one interface every CLI command calls (`Admin`), whichever way it reaches toolgate:
 * the database through the use cases (here), or a server's admin API (remote.ts). Each method
 * answers the value the use case answers, or throws the failure as a CliError with the same code
 * and message, so a command prints the same thing and exits the same way in both modes.
 */

import type { Result } from '../domain/errors.js';
import type { CreateAccountInput, UpdateAccountInput } from '../service/accounts.js';
import type { AuditContext } from '../service/audit.js';
import type { HistoryView } from '../service/billing.js';
import type { ImportAnswer, ToolRecord } from '../service/catalogue.js';
import type { Services } from '../service/index.js';
import type { KeyRecord } from '../service/keys.js';
import { type BillingShow, billingUrl, type TopupView } from '../service/payments.js';
import type { PlanSettings, PlanView } from '../service/plans.js';
import type { LedgerRecord, TokenAnswer, TokenInput } from '../service/tokens.js';
import type { UsageAnswer } from '../service/usage.js';
import type { UserRecord } from '../service/users.js';
import type { AdminAccountRecord, AuditRecord } from '../service/views.js';
import type { AddEndpointInput, DeliveryRecord, EndpointRecord } from '../service/webhooks.js';
import { CliError, EXIT_FAILED, unwrap } from './output.js';

/** One page of a list: at most `limit`, after the id `after` (oldest first). */
export interface Page {
  limit: number;
  after?: string | undefined;
}

export interface UsageRecordInput {
  category: string;
  records?: number | undefined;
  /** A unit of the category and its amount, instead of records (meters of the operator's own). */
  unit?: string | undefined;
  amount?: number | undefined;
  requests?: number | undefined;
  idempotency_key?: string | undefined;
}

export interface Admin {
  accounts: {
    create(input: CreateAccountInput): Promise<AdminAccountRecord>;
    list(page: Page): Promise<AdminAccountRecord[]>;
    get(id: string): Promise<AdminAccountRecord>;
    update(id: string, patch: UpdateAccountInput): Promise<AdminAccountRecord>;
  };
  keys: {
    create(accountId: string, name: string | undefined): Promise<KeyRecord & { key: string }>;
    list(accountId: string): Promise<KeyRecord[]>;
    revoke(keyId: string): Promise<KeyRecord>;
  };
  users: {
    add(accountId: string, email: string, role: string): Promise<UserRecord>;
    list(accountId: string): Promise<UserRecord[]>;
    /** Refused when the account would be left without an owner. */
    setRole(userId: string, role: string): Promise<UserRecord>;
    remove(userId: string): Promise<UserRecord>;
  };
  tokens: {
    apply(accountId: string, input: TokenInput): Promise<TokenAnswer>;
    ledger(accountId: string, page: Page): Promise<LedgerRecord[]>;
  };
  usage: {
    record(accountId: string, input: UsageRecordInput): Promise<{ response: UsageAnswer; replayed: boolean }>;
    history(accountId: string, input: { from?: string; to?: string; by?: string }): Promise<HistoryView>;
  };
  audit: {
    list(input: { accountId?: string; limit: number; after?: string }): Promise<AuditRecord[]>;
  };
  plans: {
    list(): Promise<PlanView[]>;
    set(id: string, assignments: string[], settings: PlanSettings): Promise<PlanView>;
  };
  topups: {
    list(): Promise<TopupView[]>;
    set(id: string, input: { tokens: number; stripe_price: string }): Promise<TopupView>;
    remove(id: string): Promise<TopupView>;
  };
  billing: {
    show(accountId: string): Promise<BillingShow>;
    /** Reads the subscription back from Stripe and applies it. */
    sync(accountId: string): Promise<{ outcome: string; detail: string }>;
    /** A customer portal URL to send the account's customer (it returns to the console's Billing). */
    portal(accountId: string): Promise<{ url: string }>;
    /** Events that matched no account (unknown customers), newest first. */
    unmatched(): Promise<BillingShow['events']>;
  };
  tools: {
    /** A catalogue with problems is refused as a failure (exit 1): the file was read, its members are wrong. */
    import(catalogue: unknown, dryRun: boolean): Promise<ImportAnswer>;
    list(): Promise<ToolRecord[]>;
    get(name: string): Promise<ToolRecord>;
    remove(name: string): Promise<ToolRecord>;
  };
  webhooks: {
    add(input: AddEndpointInput): Promise<EndpointRecord & { secret: string }>;
    list(accountId: string | undefined): Promise<EndpointRecord[]>;
    remove(id: string): Promise<EndpointRecord>;
    deliveries(id: string, page: Page): Promise<DeliveryRecord[]>;
    replay(deliveryId: string): Promise<DeliveryRecord>;
    /** Sends a signed webhook.test event now; the delivery after that attempt. */
    test(id: string): Promise<DeliveryRecord>;
  };
  console: {
    /** A console sign-in link for a user (of `accountId` when given): single use, 15 minutes. */
    link(email: string, accountId: string | undefined): Promise<{ url: string }>;
  };
}

/** A refused catalogue: a failure of the command (exit 1), not a wrong use of it. */
export function refusedCatalogue<T>(result: Result<T>): T {
  if (result.ok) return result.value;
  const { code, message, details } = result.error;
  throw new CliError(code, message, details ?? {}, EXIT_FAILED);
}

/** The use cases on the database, every change made as `by` (the CLI's user). */
export function localAdmin(s: Services, by: AuditContext): Admin {
  return {
    accounts: {
      create: async (input) => unwrap(await s.accounts.create(input, by)),
      list: async (page) => unwrap(await s.accounts.list(page.limit, page.after)),
      get: async (id) => unwrap(await s.accounts.get(id)),
      update: async (id, patch) => unwrap(await s.accounts.update(id, patch, by)),
    },
    keys: {
      create: async (accountId, name) => unwrap(await s.keys.create(accountId, name, by)),
      list: async (accountId) => unwrap(await s.keys.list(accountId)),
      revoke: async (keyId) => unwrap(await s.keys.revoke(keyId, by)),
    },
    users: {
      add: async (accountId, email, role) => unwrap(await s.users.add(accountId, email, role, by)),
      list: async (accountId) => unwrap(await s.users.list(accountId)),
      setRole: async (userId, role) => unwrap(await s.users.setRole(userId, role, by)),
      remove: async (userId) => unwrap(await s.users.remove(userId, by)),
    },
    tokens: {
      apply: async (accountId, input) => unwrap(await s.tokens.apply(accountId, input, by)),
      ledger: async (accountId, page) => unwrap(await s.tokens.ledger(accountId, page.limit, page.after)),
    },
    usage: {
      // Audited like every CLI change: the admin API's metering traffic is not.
      record: async (accountId, input) => unwrap(await s.usage.record(accountId, input, by)),
      history: async (accountId, input) => unwrap(await s.billing.history(accountId, input)),
    },
    audit: { list: async (input) => unwrap(await s.audit.list(input)) },
    plans: {
      list: () => s.plans.list(),
      set: async (id, assignments, settings) => unwrap(await s.plans.set(id, assignments, settings, by)),
    },
    topups: {
      list: () => s.payments.listTopups(),
      set: async (id, input) => unwrap(await s.payments.setTopup(id, input, by)),
      remove: async (id) => unwrap(await s.payments.removeTopup(id, by)),
    },
    billing: {
      show: async (accountId) => unwrap(await s.payments.show(accountId)),
      sync: async (accountId) => unwrap(await s.payments.sync(accountId, by)),
      portal: async (accountId) => {
        const { loadConfig } = await import('../config.js');
        const { defaultPublicUrl } = await import('../service/console.js');
        const config = loadConfig();
        const base = config.publicUrl ?? defaultPublicUrl(config.host, config.port);
        return { url: unwrap(await s.payments.portal(accountId, billingUrl(base, accountId))) };
      },
      unmatched: () => s.payments.unmatched(),
    },
    tools: {
      import: async (catalogue, dryRun) =>
        refusedCatalogue(await s.catalogue.import(catalogue, { dryRun }, by)),
      list: () => s.catalogue.list(),
      get: async (name) => unwrap(await s.catalogue.get(name)),
      remove: async (name) => unwrap(await s.catalogue.remove(name, by)),
    },
    webhooks: {
      add: async (input) => unwrap(await s.webhooks.add(input, by)),
      list: async (accountId) => unwrap(await s.webhooks.list(accountId)),
      remove: async (id) => unwrap(await s.webhooks.remove(id, by)),
      deliveries: async (id, page) => unwrap(await s.webhooks.deliveries(id, page.limit, page.after)),
      replay: async (id) => unwrap(await s.webhooks.replay(id, by)),
      test: async (id) => unwrap(await s.webhooks.test(id, by)),
    },
    console: {
      link: async (email, accountId) => {
        const links = await consoleLinks(s);
        return unwrap(await links.operatorLink(by, email, accountId));
      },
    },
  };
}

/** The console's links as the server would make them: its public URL and sign-up rule, from the configuration. */
async function consoleLinks(s: Services) {
  const [{ loadConfig }, { defaultPublicUrl }] = await Promise.all([
    import('../config.js'),
    import('../service/console.js'),
  ]);
  const config = loadConfig();
  // As on the servers: on PostgreSQL a link could name one server of several, whose console is off.
  if (config.database.kind === 'postgres' && config.publicUrl === undefined)
    throw new CliError(
      'invalid_configuration',
      'On PostgreSQL the console needs TOOLGATE_PUBLIC_URL, the one address every server is reached at: set it as on the servers.',
    );
  const publicUrl = config.publicUrl ?? defaultPublicUrl(config.host, config.port);
  return s.console({
    publicUrl: () => publicUrl,
    signup: config.console.signup,
    signupPlan: config.console.signupPlan,
  });
}
