/** @module The console's rows as both backends read them, and the one query of an email's memberships. */
import type { UserRole } from '../domain/users.js';
import type { ConsoleLink, ConsoleMembership, ConsoleSessionRecord } from './store.js';

export interface LinkRow {
  token_hash: string;
  email: string;
  account_id: string | null;
  purpose: string;
  return_to: string | null;
  created_at: number | string;
  expires_at: number | string;
  used_at: number | string | null;
}

export interface SessionRow {
  id: string;
  token_hash: string;
  email: string;
  created_at: number | string;
  last_seen_at: number | string;
}

export interface MembershipRow {
  account_id: string;
  account_name: string;
  user_id: string;
  role: string;
}

// PostgreSQL's BIGINT comes back as a string.
const n = (v: number | string) => Number(v);

export const toLink = (r: LinkRow): ConsoleLink => ({
  tokenHash: r.token_hash,
  email: r.email,
  accountId: r.account_id,
  purpose: r.purpose as ConsoleLink['purpose'],
  returnTo: r.return_to,
  createdAt: n(r.created_at),
  expiresAt: n(r.expires_at),
  usedAt: r.used_at === null ? null : n(r.used_at),
});

export const toSession = (r: SessionRow): ConsoleSessionRecord => ({
  id: r.id,
  tokenHash: r.token_hash,
  email: r.email,
  createdAt: n(r.created_at),
  lastSeenAt: n(r.last_seen_at),
});

export const toMembership = (r: MembershipRow): ConsoleMembership => ({
  accountId: r.account_id,
  accountName: r.account_name,
  userId: r.user_id,
  role: r.role as UserRole,
});

/** With the backend's placeholder for the email (`?` or `$1`). */
export const membershipsQuery = (placeholder: string) =>
  `SELECT u.account_id, a.name AS account_name, u.id AS user_id, u.role
   FROM users u JOIN accounts a ON a.id = u.account_id
   WHERE u.email = ${placeholder} ORDER BY a.name, u.account_id`;
