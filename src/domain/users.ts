/** @module Users of an account: an email and a role. */
import { createHmac } from 'node:crypto';
import type { EpochSeconds } from './clock.js';
import { fail, ok, type Result } from './errors.js';

export const USER_ROLES = ['owner', 'member'] as const;
export type UserRole = (typeof USER_ROLES)[number];

export interface User {
  id: string;
  accountId: string;
  email: string;
  role: UserRole;
  createdAt: EpochSeconds;
}

// Deliberately loose: one @, something on each side, a dot in the domain, no spaces.
const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]+$/;

export function validateUser(email: unknown, role: unknown): Result<{ email: string; role: UserRole }> {
  if (typeof email !== 'string' || email.length > 254 || !EMAIL.test(email.trim())) {
    return fail('invalid_arguments', 'email must be an email address.');
  }
  const valid = validateRole(role ?? 'member');
  if (!valid.ok) return valid;
  return ok({ email: email.trim().toLowerCase(), role: valid.value });
}

export function validateRole(role: unknown): Result<UserRole> {
  if (typeof role !== 'string' || !(USER_ROLES as readonly string[]).includes(role)) {
    return fail('invalid_arguments', `role must be one of ${USER_ROLES.join(', ')}.`);
  }
  return ok(role as UserRole);
}

/**
 * The subject of a person's OAuth grants (the provider's accountId, the ID token's `sub`): an HMAC
 * of their email (lower-cased) under the key secret, opaque and the same for every client and
 * server, so no client learns the email from it. The person, not the account: the grant's key row
 * names the account, and a person's grants are found by this.
 */
export function personSubject(secret: string, email: string): string {
  return createHmac('sha256', secret).update(`toolgate-oauth:sub:${email.toLowerCase()}`).digest('base64url');
}
