/** @module JSON shapes that the admin API and the CLI's --json print: snake_case, ISO times. */
import { isUnlimited, visibleBalance } from '../domain/accounts.js';
import type { ApiKeyRecord } from '../domain/api-keys.js';
import type { AuditDetails, AuditEntry } from '../domain/audit.js';
import { type EpochSeconds, isoSeconds } from '../domain/clock.js';
import {
  type FairUseMetadata,
  type FairUseView,
  fairUseMetadata,
  fairUseView,
  firstCategory,
  isRunning,
} from '../domain/fair-use.js';
import type { LedgerEntry } from '../domain/ledger.js';
import type { User } from '../domain/users.js';
import type { AccountSnapshot } from '../store/store.js';

/** The account record exactly as `get_account` returns it in `results`, fields in the spec's order. */
export interface AccountRecord {
  id: string;
  name: string;
  status: string;
  plan: string;
  token_balance: number;
  unlimited: boolean;
  fair_use: FairUseView;
  api_key_count: number;
  user_count: number;
  created_at: string;
}

export function accountRecord(s: AccountSnapshot, now: EpochSeconds): AccountRecord {
  return {
    id: s.account.id,
    name: s.account.name,
    status: s.account.status,
    plan: s.account.planId,
    token_balance: visibleBalance(s.account, s.plan),
    unlimited: isUnlimited(s.account, s.plan),
    fair_use: fairUseView(s.plan.limits, s.windows, now),
    api_key_count: s.apiKeyCount,
    user_count: s.userCount,
    created_at: isoSeconds(s.account.createdAt),
  };
}

/** What operators see: the caller's record plus the fields only an operator needs. */
export interface AdminAccountRecord extends AccountRecord {
  unlimited_override: boolean | null;
  /** Below this balance `tokens.low_balance` fires; null: never. */
  low_balance: number | null;
  updated_at: string;
}

export function adminAccountRecord(s: AccountSnapshot, now: EpochSeconds): AdminAccountRecord {
  return {
    ...accountRecord(s, now),
    unlimited_override: s.account.unlimitedOverride,
    low_balance: s.account.lowBalance,
    updated_at: isoSeconds(s.account.updatedAt),
  };
}

export interface GetAccountResponse {
  results: AccountRecord;
  status: 'ok';
  metadata: { fair_use: FairUseMetadata };
}

export function getAccountResponse(s: AccountSnapshot, now: EpochSeconds): GetAccountResponse {
  return {
    results: accountRecord(s, now),
    status: 'ok',
    // The plan's first category: enrich for the default plans.
    metadata: { fair_use: fairUseMetadata(s.plan.limits, s.windows, firstCategory(s.plan.limits), now) },
  };
}

/**
 * `JSON.stringify(getAccountResponse(s, now))` in two parts, for answering from memory, each
 * rendered by itself: `head` (the envelope up to the metadata's fair_use, with the record, which
 * changes with time only when a running window ends) is the same for every `now` from `from` (when
 * it was made) until just before `until`; `tail(now)` (the metadata's fair_use, whose resets move
 * with the clock while a window is not running, and the braces that close it) is cheap to make
 * again each second. Members in getAccountResponse's order, so head + tail is its JSON.
 */
export function getAccountParts(
  s: AccountSnapshot,
  now: EpochSeconds,
): { head: string; from: EpochSeconds; until: EpochSeconds; tail: (now: EpochSeconds) => string } {
  let until = Number.POSITIVE_INFINITY;
  for (const w of s.windows) if (isRunning(w, now) && w.endsAt < until) until = w.endsAt;
  const head = `{"results":${JSON.stringify(accountRecord(s, now))},"status":"ok","metadata":{"fair_use":`;
  const tail = (t: EpochSeconds) =>
    `${JSON.stringify(fairUseMetadata(s.plan.limits, s.windows, firstCategory(s.plan.limits), t))}}}`;
  return { head, from: now, until, tail };
}

const iso = (s: EpochSeconds | null) => (s === null ? null : isoSeconds(s));

export function keyRecord(k: ApiKeyRecord) {
  return {
    id: k.id,
    account_id: k.accountId,
    name: k.name,
    hint: k.hint,
    status: k.revokedAt === null ? ('active' as const) : ('revoked' as const),
    created_at: isoSeconds(k.createdAt),
    revoked_at: iso(k.revokedAt),
    last_used_at: iso(k.lastUsedAt),
  };
}

export function userRecord(u: User) {
  return {
    id: u.id,
    account_id: u.accountId,
    email: u.email,
    role: u.role,
    created_at: isoSeconds(u.createdAt),
  };
}

export function ledgerRecord(e: LedgerEntry) {
  return {
    id: e.id,
    account_id: e.accountId,
    kind: e.kind,
    amount: e.amount,
    delta: e.delta,
    balance_after: e.balanceAfter,
    reason: e.reason,
    idempotency_key: e.idempotencyKey,
    created_at: isoSeconds(e.createdAt),
  };
}

export interface AuditRecord {
  id: string;
  at: string;
  actor: string;
  action: string;
  account_id: string | null;
  target_id: string | null;
  details: AuditDetails;
}

export function auditRecord(e: AuditEntry): AuditRecord {
  return {
    id: e.id,
    at: isoSeconds(e.at),
    actor: e.actor,
    action: e.action,
    account_id: e.accountId,
    target_id: e.targetId,
    details: e.details,
  };
}
