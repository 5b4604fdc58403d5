/**
 * @module The audit trail: who (an admin token's name, the CLI's OS user, or the system) did what,
 * when, to which account. The store writes an entry in the same transaction as the action it
 * describes, and only when the action took effect.
 */
import type { EpochSeconds } from './clock.js';

export const AUDIT_ACTIONS = [
  'account.create',
  'account.update',
  'key.create',
  'key.revoke',
  'user.add',
  'user.remove',
  'tokens.grant',
  'tokens.charge',
  'tokens.adjust',
  'usage.record',
  'plan.put',
  'topup.put',
  'topup.remove',
  'tool.put',
  'tool.remove',
  'webhook.add',
  'webhook.remove',
  'webhook.replay',
  'webhook.test',
  'user.role',
  'console.sign_in',
  'console.sign_out',
  'console.link',
  'user.alerts',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export type JsonValue = string | number | boolean | null | JsonValue[] | { [member: string]: JsonValue };

/** What was asked, in the admin API's words (snake_case): changed fields, amounts, a plan's limits. */
export type AuditDetails = { [member: string]: JsonValue };

export interface AuditEntry {
  /** `aud_…`: time-ordered, so id order is the order the actions were taken in. */
  id: string;
  at: EpochSeconds;
  /** `admin:<token name>`, `cli:<OS user name>` (or `cli`), `system:<what>`. */
  actor: string;
  action: AuditAction;
  /** The account acted on; null for plans, which belong to no account. */
  accountId: string | null;
  /** The key, user, ledger entry or plan acted on; null when the account itself is the target. */
  targetId: string | null;
  details: AuditDetails;
}

export function isAuditAction(value: string): value is AuditAction {
  return (AUDIT_ACTIONS as readonly string[]).includes(value);
}

// Members that would hold a credential. Details are built from what was asked, and an API key is
// only ever asked for by presenting it; this catches a future use case that copies one in.
const CREDENTIAL_MEMBERS = /^(key|api_key|digest|secret|token|password)$/i;

/** Throws (a bug, not an expected failure) when details carry a member named like a credential. */
export function assertNoCredentials(details: AuditDetails): AuditDetails {
  const visit = (value: JsonValue): void => {
    if (value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const inner of value) visit(inner);
      return;
    }
    for (const [member, inner] of Object.entries(value)) {
      if (CREDENTIAL_MEMBERS.test(member)) throw new Error(`Audit details must not carry "${member}".`);
      visit(inner);
    }
  };
  visit(details);
  return details;
}
