/** @module Row shapes of the schema (both backends) and their mapping to domain values. */
import type { Account, AccountStatus } from '../domain/accounts.js';
import type { ApiKeyRecord } from '../domain/api-keys.js';
import type { AuditAction, AuditDetails, AuditEntry } from '../domain/audit.js';
import type { ToolDefinition } from '../domain/catalogue.js';
import type { WindowState } from '../domain/fair-use.js';
import type { LedgerEntry, LedgerKind } from '../domain/ledger.js';
import { type AccountBilling, isSubscriptionStatus } from '../domain/payments.js';
import type { Plan, PlanLimits } from '../domain/plans.js';
import type { UsageGrouping, UsageRow } from '../domain/usage-history.js';
import type { User, UserRole } from '../domain/users.js';
import type { AccountSnapshot } from './accounts-store.js';
import type { LedgerAppend, StoredTool, UsageGroup } from './store.js';

// SQLite hands back 0/1, PostgreSQL booleans; both the limits as JSON text. Both map alike.
export interface PlanRow {
  id: string;
  unlimited: number | boolean;
  limits: string;
  subscription?: string | null;
  stripe_price?: string | null;
  period_tokens?: number | string | null;
  name?: string | null;
  description?: string | null;
}
export interface AccountRow {
  id: string;
  name: string;
  plan_id: string;
  status: string;
  unlimited_override: number | boolean | null;
  token_balance: number;
  created_at: number;
  updated_at: number;
  plan_since: number | null;
  low_balance?: number | string | null;
  stripe_customer?: string | null;
  stripe_subscription?: string | null;
  subscription_status?: string | null;
  stripe_price?: string | null;
  period_start?: number | string | null;
  period_end?: number | string | null;
  stripe_state_at?: number | string | null;
  suspended_for_payment?: number | boolean;
}
export interface KeyRow {
  id: string;
  account_id: string;
  name: string | null;
  hint: string;
  created_at: number;
  revoked_at: number | null;
  last_used_at: number | null;
}
export interface UserRow {
  id: string;
  account_id: string;
  email: string;
  role: string;
  created_at: number;
}
export interface LedgerRow {
  id: string;
  account_id: string;
  kind: string;
  amount: number;
  delta: number;
  balance_after: number;
  reason: string | null;
  idempotency_key: string | null;
  request_hash: string;
  created_at: number;
}
export interface AuditRow {
  id: string;
  at: number;
  actor: string;
  action: string;
  account_id: string | null;
  target_id: string | null;
  details: string | AuditDetails;
}
/** How many plans' limits limitsFromText keeps; past it, it forgets them all and starts again. */
const MAX_LIMITS_KEPT = 1024;
const limitsByText = new Map<string, PlanLimits>();

/**
 * A plan's limits from their stored JSON text, parsed once per text and frozen: every snapshot read
 * of an account on the plan shares one object, so what is compiled per limits object
 * (domain/fair-use-shape.ts) is compiled once per plan, not once per read. Frozen because shared:
 * whatever changes a plan's limits builds new ones (plans.ts copies before it assigns).
 */
export function limitsFromText(text: string): PlanLimits {
  let limits = limitsByText.get(text);
  if (limits === undefined) {
    limits = JSON.parse(text) as PlanLimits;
    for (const units of Object.values(limits)) {
      for (const windows of Object.values(units)) Object.freeze(windows);
      Object.freeze(units);
    }
    Object.freeze(limits);
    if (limitsByText.size >= MAX_LIMITS_KEPT) limitsByText.clear();
    limitsByText.set(text, limits);
  }
  return limits;
}

/** A plan row; PostgreSQL is asked for the limits as text (`limits::text`), as SQLite stores them. */
export function toPlan(r: PlanRow): Plan {
  const plan: Plan = {
    id: r.id,
    unlimited: r.unlimited === 1 || r.unlimited === true,
    limits: limitsFromText(r.limits),
  };
  // Only a subscription says so: a plan that is none reads back as it was written.
  if (r.subscription === 'monthly') plan.subscription = 'monthly';
  if (r.stripe_price) plan.stripePrice = r.stripe_price;
  if (r.period_tokens !== null && r.period_tokens !== undefined) plan.periodTokens = Number(r.period_tokens);
  if (r.name) plan.name = r.name;
  if (r.description) plan.description = r.description;
  return plan;
}

const numberOrNull = (v: number | string | null | undefined) =>
  v === null || v === undefined ? null : Number(v);

/** The account's link to Stripe, when it has a customer there. */
function billingOf(r: AccountRow): AccountBilling | undefined {
  if (!r.stripe_customer) return undefined;
  const status = r.subscription_status ?? null;
  return {
    customerId: r.stripe_customer,
    subscriptionId: r.stripe_subscription ?? null,
    status: status !== null && isSubscriptionStatus(status) ? status : null,
    priceId: r.stripe_price ?? null,
    periodStart: numberOrNull(r.period_start),
    periodEnd: numberOrNull(r.period_end),
    stateAt: numberOrNull(r.stripe_state_at),
    suspendedForPayment: r.suspended_for_payment === 1 || r.suspended_for_payment === true,
  };
}

export const toAccount = (r: AccountRow): Account => {
  const account = plainAccount(r);
  const billing = billingOf(r);
  if (billing) account.billing = billing;
  return account;
};

const plainAccount = (r: AccountRow): Account => ({
  id: r.id,
  name: r.name,
  planId: r.plan_id,
  status: r.status as AccountStatus,
  unlimitedOverride:
    r.unlimited_override === null ? null : r.unlimited_override === 1 || r.unlimited_override === true,
  tokenBalance: r.token_balance,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  planSince: r.plan_since ?? r.created_at,
  lowBalance: r.low_balance === null || r.low_balance === undefined ? null : Number(r.low_balance),
});

/** What both backends' snapshot query answers: the account's row, its plan's and both counts. */
export type SnapshotRow = AccountRow & {
  plan_unlimited: PlanRow['unlimited'];
  plan_limits: PlanRow['limits'];
  plan_subscription: string | null;
  api_key_count: number;
  user_count: number;
};

/** A snapshot from its row, with the windows each backend keeps its own way. */
export const toSnapshot = (row: SnapshotRow, windows: WindowState[]): AccountSnapshot => ({
  account: toAccount(row),
  plan: toPlan({
    id: row.plan_id,
    unlimited: row.plan_unlimited,
    limits: row.plan_limits,
    subscription: row.plan_subscription,
  }),
  apiKeyCount: row.api_key_count,
  userCount: row.user_count,
  windows,
});

export const toKey = (r: KeyRow): ApiKeyRecord => ({
  id: r.id,
  accountId: r.account_id,
  name: r.name,
  hint: r.hint,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
  lastUsedAt: r.last_used_at,
});

export const toUser = (r: UserRow): User => ({
  id: r.id,
  accountId: r.account_id,
  email: r.email,
  role: r.role as UserRole,
  createdAt: r.created_at,
});

export const toLedger = (r: LedgerRow): LedgerEntry => ({
  id: r.id,
  accountId: r.account_id,
  kind: r.kind as LedgerKind,
  amount: r.amount,
  delta: r.delta,
  balanceAfter: r.balance_after,
  reason: r.reason,
  idempotencyKey: r.idempotency_key,
  createdAt: r.created_at,
});

export const toAudit = (r: AuditRow): AuditEntry => ({
  id: r.id,
  at: r.at,
  actor: r.actor,
  action: r.action as AuditAction,
  accountId: r.account_id,
  targetId: r.target_id,
  details: typeof r.details === 'string' ? (JSON.parse(r.details) as AuditDetails) : r.details,
});

/** An audit row's values, in the column order both stores insert them (AUDIT_COLUMNS). */
export const AUDIT_COLUMNS = 'id, at, actor, action, account_id, target_id, details';
export const auditValues = (a: AuditEntry): unknown[] => [
  a.id,
  a.at,
  a.actor,
  a.action,
  a.accountId,
  a.targetId,
  JSON.stringify(a.details),
];

/** A ledger row's values, in the column order both stores insert them (LEDGER_COLUMNS). */
export const LEDGER_COLUMNS =
  'id, account_id, kind, amount, delta, balance_after, reason, idempotency_key, request_hash, created_at';
export const ledgerValues = (e: LedgerAppend, delta: number, balanceAfter: number): unknown[] => [
  e.id,
  e.accountId,
  e.kind,
  e.amount,
  delta,
  balanceAfter,
  e.reason,
  e.idempotencyKey,
  e.requestHash,
  e.createdAt,
];

export const boolToInt = (b: boolean | null): number | null => (b === null ? null : b ? 1 : 0);

/** A tool's row; `revision` when read with the catalogue's (list). Definitions are JSON text on both backends. */
export interface ToolRow {
  name: string | null;
  definition: string | null;
  created_at: number | string | null;
  updated_at: number | string | null;
  revision?: number | string;
}

export const toStoredTool = (r: ToolRow): StoredTool => ({
  definition: JSON.parse(r.definition!) as ToolDefinition,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

/** The whole catalogue with its revision in one statement: one row per tool, or one of nulls when empty. */
export const CATALOGUE_SELECT = `SELECT c.revision, t.name, t.definition, t.created_at, t.updated_at
  FROM tool_catalogue c LEFT JOIN tools t ON true ORDER BY t.name`;

export function toCatalogue(rows: readonly ToolRow[]): { revision: number; tools: StoredTool[] } {
  return {
    revision: Number(rows[0]?.revision ?? 0),
    tools: rows.filter((r) => r.name !== null).map(toStoredTool),
  };
}

/** The rollup's count columns, in UsageCounts' order: both stores add and sum these. */
export const USAGE_COUNT_COLUMNS = [
  'calls',
  'tokens',
  'records',
  'with_data',
  'without_data',
  'failed',
] as const;
export const usageCountValues = (r: UsageRow): number[] => [
  r.calls,
  r.tokens,
  r.records,
  r.withData,
  r.withoutData,
  r.failed,
];

/** The column a history is grouped by. */
export const USAGE_GROUP_COLUMN: Record<UsageGrouping, string> = { day: 'day', key: 'key_id', tool: 'tool' };

export interface UsageGroupRow {
  grp: string;
  calls: number | string;
  tokens: number | string;
  records: number | string;
  with_data: number | string;
  without_data: number | string;
  failed: number | string;
}

/** `SELECT <col> AS grp, sum(...)...`: the history query's select list, the same on both backends. */
export const USAGE_SUMS = USAGE_COUNT_COLUMNS.map((c) => `sum(${c}) AS ${c}`).join(', ');

export const toUsageGroup = (r: UsageGroupRow): UsageGroup => ({
  group: r.grp,
  calls: Number(r.calls),
  tokens: Number(r.tokens),
  records: Number(r.records),
  withData: Number(r.with_data),
  withoutData: Number(r.without_data),
  failed: Number(r.failed),
});

/** The entry an append wrote, as ledgerValues wrote it: what a store answers without reading it back. */
export const appendedLedger = (e: LedgerAppend, delta: number, balanceAfter: number): LedgerEntry => ({
  id: e.id,
  accountId: e.accountId,
  kind: e.kind,
  amount: e.amount,
  delta,
  balanceAfter,
  reason: e.reason,
  idempotencyKey: e.idempotencyKey,
  createdAt: e.createdAt,
});
