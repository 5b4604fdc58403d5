/** @module The users of an account. */
import type { AuditEntry } from '../domain/audit.js';
import type { EpochSeconds } from '../domain/clock.js';
import type { User, UserRole } from '../domain/users.js';

/**
 * Rules a change to an account's people is decided by inside its own transaction (on PostgreSQL
 * with the account's row locked, so two servers' changes to one account take turns), never by a
 * read before it: what another change did a moment earlier counts.
 */
export interface MemberGuard {
  /** Refuse when the change would leave the account without an owner ('last_owner'). */
  keepAnOwner?: boolean;
  /** Refuse unless this email is (still) an owner of the account ('not_owner'). */
  byOwner?: string;
  /** Refuse unless the account is active, neither suspended nor closed ('inactive'). */
  activeAccount?: boolean;
}

/** Why a guarded change was refused. */
export type GuardRefusal = 'last_owner' | 'not_owner' | 'inactive';

export interface UserRemoval {
  /**
   * Revokes, in the same transaction and at this time, the key rows of the OAuth grants the person
   * allowed in this account (their provider Grant names the person's subject): a connector ends
   * with the person who allowed it.
   */
  revokeGrants?: {
    at: EpochSeconds;
    /** The person's subject, as their grants name them (domain/users.ts personSubject). */
    subject: string;
  };
}

export interface UserStore {
  /** 'duplicate' when the account already has a user with this email. */
  add(user: User, audit?: AuditEntry, guard?: MemberGuard): Promise<'added' | 'duplicate' | GuardRefusal>;
  get(id: string): Promise<User | undefined>;
  list(accountId: string): Promise<User[]>;
  remove(
    id: string,
    audit?: AuditEntry,
    guard?: MemberGuard & UserRemoval,
  ): Promise<User | GuardRefusal | undefined>;
  /** Sets a user's role (audited when the user exists); the user after, a refusal, or undefined. */
  setRole(
    userId: string,
    role: UserRole,
    audit?: AuditEntry,
    guard?: MemberGuard,
  ): Promise<User | GuardRefusal | undefined>;
}
