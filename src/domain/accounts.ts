/** @module Accounts: status, plan, the unlimited override, and the rules that govern changes to them. */
import type { EpochSeconds } from './clock.js';
import { fail, ok, type Result } from './errors.js';
import type { AccountBilling } from './payments.js';
import type { Plan } from './plans.js';

export const ACCOUNT_STATUSES = ['active', 'suspended', 'closed'] as const;
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number];

export interface Account {
  id: string;
  name: string;
  planId: string;
  status: AccountStatus;
  /** null: follow the plan; true/false: the account's own say. */
  unlimitedOverride: boolean | null;
  /** Stored balance; shown as -1 while the account is unlimited. */
  tokenBalance: number;
  createdAt: EpochSeconds;
  updatedAt: EpochSeconds;
  /** When the account joined its current plan: where a subscription's monthly periods are anchored. */
  planSince: EpochSeconds;
  /** Below this balance `tokens.low_balance` fires (once per crossing down); null: never. */
  lowBalance: number | null;
  /** Its Stripe customer and subscription, once it has one (docs/payments.md). */
  billing?: AccountBilling;
}

export function isUnlimited(account: Account, plan: Plan): boolean {
  return account.unlimitedOverride ?? plan.unlimited;
}

export function visibleBalance(account: Account, plan: Plan): number {
  return isUnlimited(account, plan) ? -1 : account.tokenBalance;
}

export function isAccountStatus(value: string): value is AccountStatus {
  return (ACCOUNT_STATUSES as readonly string[]).includes(value);
}

export function validateAccountName(name: unknown): Result<string> {
  if (typeof name !== 'string') return fail('invalid_arguments', 'name must be a string.');
  const trimmed = name.trim();
  if (trimmed.length < 1 || trimmed.length > 200)
    return fail('invalid_arguments', 'name must be 1-200 characters.');
  return ok(trimmed);
}

/** Closed is final: closing revokes every key, and a closed account is not reopened. */
export function validateStatusChange(from: AccountStatus, to: string): Result<AccountStatus> {
  if (!isAccountStatus(to))
    return fail('invalid_arguments', `status must be one of ${ACCOUNT_STATUSES.join(', ')}.`);
  if (from === 'closed' && to !== 'closed') return fail('conflict', 'A closed account cannot be reopened.');
  return ok(to);
}

/** The answer a metered tool gives an account that may not use it (get_account still answers). */
export function statusRefusal(status: AccountStatus): Result<never> | undefined {
  if (status === 'suspended') return fail('account_suspended');
  if (status === 'closed') return fail('account_closed');
  return undefined;
}
