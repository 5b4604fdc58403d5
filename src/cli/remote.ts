/**
 * @module The `Admin` port over a server's admin API (`--url` / TOOLGATE_URL, with
 * TOOLGATE_ADMIN_TOKEN): each method one admin request, each error body thrown as the CliError the
 * use case would have made (same code, message and members), so commands print the same either way.
 */
import { seg, type ToolgateAdminClient } from '../client/admin-client.js';
import { ToolgateError } from '../client/errors.js';
import { applyLimitAssignments } from '../domain/plans.js';
import type { HistoryView } from '../service/billing.js';
import type { ImportAnswer, ToolRecord } from '../service/catalogue.js';
import type { KeyRecord } from '../service/keys.js';
import type { BillingShow, TopupView } from '../service/payments.js';
import type { PlanView } from '../service/plans.js';
import type { LedgerRecord, TokenAnswer } from '../service/tokens.js';
import type { UsageAnswer } from '../service/usage.js';
import type { UserRecord } from '../service/users.js';
import type { AdminAccountRecord, AuditRecord } from '../service/views.js';
import type { DeliveryRecord, EndpointRecord } from '../service/webhooks.js';
import type { Admin } from './admin-port.js';
import { CliError, EXIT_FAILED, unwrap } from './output.js';

/** The error body's own members, as the use case's failure carried them (no request id: there was no request of ours). */
function asCliError(err: unknown, exitCode?: number): unknown {
  if (!(err instanceof ToolgateError)) return err;
  const { status: _s, error: _e, code: _c, message: _m, request_id: _r, ...details } = err.body ?? {};
  return new CliError(err.code, err.message, details, exitCode);
}

type Query = Record<string, string | number | undefined>;

/** The admin API as the groups below use it: one request, or a list's `data`, errors as CliErrors. */
interface Wire {
  client: ToolgateAdminClient;
  call<T>(method: string, path: string, opts?: { query?: Query; body?: unknown }): Promise<T>;
  data<T>(path: string, query?: Query): Promise<T>;
}

function wireOf(client: ToolgateAdminClient): Wire {
  const call = async <T>(method: string, path: string, opts: { query?: Query; body?: unknown } = {}) => {
    try {
      return await client.request<T>(method, path, opts);
    } catch (err) {
      throw asCliError(err);
    }
  };
  const data = async <T>(path: string, query?: Query) =>
    (await call<{ data: T }>('GET', path, query ? { query } : {})).data;
  return { client, call, data };
}

export function remoteAdmin(client: ToolgateAdminClient): Admin {
  const wire = wireOf(client);
  return {
    accounts: remoteAccounts(wire),
    keys: remoteKeys(wire),
    users: remoteUsers(wire),
    tokens: remoteTokens(wire),
    usage: remoteUsage(wire),
    audit: {
      list: (input) =>
        wire.data<AuditRecord[]>('/audit', {
          account_id: input.accountId,
          limit: input.limit,
          after: input.after,
        }),
    },
    plans: remotePlans(wire),
    topups: remoteTopups(wire),
    billing: remoteBilling(wire),
    tools: remoteTools(wire),
    webhooks: remoteWebhooks(wire),
    console: {
      link: async (email, accountId) => {
        try {
          return await client.consoleLink(email, accountId);
        } catch (err) {
          throw asCliError(err);
        }
      },
    },
  };
}

function remoteAccounts({ call, data }: Wire): Admin['accounts'] {
  return {
    create: (input) => call<AdminAccountRecord>('POST', '/accounts', { body: input }),
    list: (page) => data<AdminAccountRecord[]>('/accounts', { limit: page.limit, after: page.after }),
    get: (id) => call<AdminAccountRecord>('GET', `/accounts/${seg(id)}`),
    update: (id, patch) => call<AdminAccountRecord>('PATCH', `/accounts/${seg(id)}`, { body: patch }),
  };
}

function remoteKeys({ call, data }: Wire): Admin['keys'] {
  return {
    create: (accountId, name) =>
      call<KeyRecord & { key: string }>('POST', `/accounts/${seg(accountId)}/keys`, {
        body: name === undefined ? {} : { name },
      }),
    list: (accountId) => data<KeyRecord[]>(`/accounts/${seg(accountId)}/keys`),
    revoke: (keyId) => call<KeyRecord>('DELETE', `/keys/${seg(keyId)}`),
  };
}

function remoteUsers({ call, data }: Wire): Admin['users'] {
  return {
    add: (accountId, email, role) =>
      call<UserRecord>('POST', `/accounts/${seg(accountId)}/users`, { body: { email, role } }),
    list: (accountId) => data<UserRecord[]>(`/accounts/${seg(accountId)}/users`),
    setRole: (userId, role) => call<UserRecord>('PATCH', `/users/${seg(userId)}`, { body: { role } }),
    remove: (userId) => call<UserRecord>('DELETE', `/users/${seg(userId)}`),
  };
}

function remoteTokens({ call, data }: Wire): Admin['tokens'] {
  return {
    apply: (accountId, input) =>
      call<TokenAnswer>('POST', `/accounts/${seg(accountId)}/tokens`, { body: input }),
    ledger: (accountId, page) =>
      data<LedgerRecord[]>(`/accounts/${seg(accountId)}/tokens`, { limit: page.limit, after: page.after }),
  };
}

function remoteUsage({ client, call }: Wire): Admin['usage'] {
  return {
    record: async (accountId, input) => {
      try {
        const { body, headers } = await client.exchange<UsageAnswer>(
          'POST',
          `/accounts/${seg(accountId)}/usage`,
          { body: input },
        );
        return { response: body, replayed: headers.get('idempotent-replayed') === 'true' };
      } catch (err) {
        throw asCliError(err);
      }
    },
    history: (accountId, input) =>
      call<HistoryView>('GET', `/accounts/${seg(accountId)}/usage/history`, { query: input }),
  };
}

function remotePlans({ call, data }: Wire): Admin['plans'] {
  return {
    list: () => data<PlanView[]>('/plans'),
    // The API takes a whole plan: the limits given are applied to the plan as the server has it,
    // by the rules the database mode applies them with; what is not given stays as it is.
    set: async (id, assignments, settings) => {
      const existing = (await data<PlanView[]>('/plans')).find((p) => p.id === id);
      const limits = unwrap(applyLimitAssignments(existing?.limits, assignments));
      const keep = <T>(given: T | undefined, had: T) => (given === undefined ? had : given);
      return call<PlanView>('PUT', `/plans/${seg(id)}`, {
        body: {
          unlimited: keep(settings.unlimited, existing?.unlimited ?? false),
          limits,
          subscription: keep(settings.subscription, existing?.subscription ?? null),
          stripe_price: keep(settings.stripePrice, existing?.stripe_price ?? null),
          period_tokens: keep(settings.periodTokens, existing?.period_tokens ?? null),
          name: keep(settings.name, existing?.name ?? null),
          description: keep(settings.description, existing?.description ?? null),
        },
      });
    },
  };
}

function remoteTopups({ call, data }: Wire): Admin['topups'] {
  return {
    list: () => data<TopupView[]>('/topups'),
    set: (id, input) => call<TopupView>('PUT', `/topups/${seg(id)}`, { body: input }),
    remove: (id) => call<TopupView>('DELETE', `/topups/${seg(id)}`),
  };
}

function remoteBilling({ call, data }: Wire): Admin['billing'] {
  const path = (id: string) => `/accounts/${seg(id)}/billing`;
  return {
    show: (id) => call<BillingShow>('GET', path(id)),
    sync: (id) => call<{ outcome: string; detail: string }>('POST', `${path(id)}/sync`),
    portal: (id) => call<{ url: string }>('POST', `${path(id)}/portal`),
    unmatched: () => data<BillingShow['events']>('/billing/unmatched'),
  };
}

function remoteTools({ client, call, data }: Wire): Admin['tools'] {
  return {
    import: async (catalogue, dryRun) => {
      try {
        return await client.request<ImportAnswer>('POST', '/tools/import', {
          query: { dry_run: dryRun ? 'true' : undefined },
          body: catalogue,
        });
      } catch (err) {
        // Refused members are a failure of the command (exit 1), as in the database mode.
        throw asCliError(err, err instanceof ToolgateError && err.status === 400 ? EXIT_FAILED : undefined);
      }
    },
    list: () => data<ToolRecord[]>('/tools'),
    get: (name) => call<ToolRecord>('GET', `/tools/${seg(name)}`),
    remove: (name) => call<ToolRecord>('DELETE', `/tools/${seg(name)}`),
  };
}

function remoteWebhooks({ call, data }: Wire): Admin['webhooks'] {
  return {
    add: (input) => call<EndpointRecord & { secret: string }>('POST', '/webhooks', { body: input }),
    list: (accountId) => data<EndpointRecord[]>('/webhooks', { account_id: accountId }),
    remove: (id) => call<EndpointRecord>('DELETE', `/webhooks/${seg(id)}`),
    deliveries: (id, page) =>
      data<DeliveryRecord[]>(`/webhooks/${seg(id)}/deliveries`, { limit: page.limit, after: page.after }),
    replay: (id) => call<DeliveryRecord>('POST', `/webhook-deliveries/${seg(id)}/replay`),
    test: (id) => call<DeliveryRecord>('POST', `/webhooks/${seg(id)}/test`),
  };
}
