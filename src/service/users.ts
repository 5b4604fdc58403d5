/** @module Use cases on the users of an account. */
import { fail, ok, type Result } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { personSubject, validateRole, validateUser } from '../domain/users.js';
import type { GuardRefusal, MemberGuard } from '../store/store.js';
import { type AuditContext, draftAudit } from './audit.js';
import { now, type ServiceDeps } from './context.js';
import { userRecord } from './views.js';

export type UserRecord = ReturnType<typeof userRecord>;

export const LAST_OWNER = 'An account keeps at least one owner.';

/** A guarded change's refusal as an answer. */
export function guardRefusal(refused: GuardRefusal): Result<never> {
  if (refused === 'last_owner') return fail('conflict', LAST_OWNER);
  // A member is not told what an owner's action would have done: as the console's owner pages, not found.
  if (refused === 'not_owner') return fail('not_found', 'Only an owner of the account can do this.');
  return fail('conflict', 'The account is suspended or closed: nothing can be added to it.');
}

export class UserService {
  constructor(private readonly deps: ServiceDeps) {}

  /** `guard`: the console's rules (an invitation), decided in the write's transaction. */
  async add(
    accountId: string,
    email: unknown,
    role?: unknown,
    by?: AuditContext,
    guard?: MemberGuard,
  ): Promise<Result<UserRecord>> {
    const valid = validateUser(email, role);
    if (!valid.ok) return valid;
    if (!(await this.deps.store.accounts.get(accountId)))
      return fail('not_found', `No account "${accountId}".`);
    const user = {
      id: newId('usr', this.deps.clock.now()),
      accountId,
      ...valid.value,
      createdAt: now(this.deps),
    };
    const audit = draftAudit(this.deps, by, 'user.add', accountId, user.id, {
      email: user.email,
      role: user.role,
    });
    const outcome = await this.deps.store.users.add(user, audit, guard);
    if (outcome === 'duplicate')
      return fail('conflict', `The account already has a user ${valid.value.email}.`);
    if (outcome !== 'added') return guardRefusal(outcome);
    return ok(userRecord(user));
  }

  async list(accountId: string): Promise<Result<UserRecord[]>> {
    if (!(await this.deps.store.accounts.get(accountId)))
      return fail('not_found', `No account "${accountId}".`);
    return ok((await this.deps.store.users.list(accountId)).map(userRecord));
  }

  /**
   * Changes a user's role, as an operator (admin API, CLI): the account keeps at least one owner,
   * decided in the write's transaction. The role the user has already is no change, and not audited.
   */
  async setRole(userId: string, role: unknown, by?: AuditContext): Promise<Result<UserRecord>> {
    const valid = validateRole(role);
    if (!valid.ok) return valid;
    const existing = await this.deps.store.users.get(userId);
    if (!existing) return fail('not_found', `No user "${userId}".`);
    if (existing.role === valid.value) return ok(userRecord(existing));
    const audit = draftAudit(this.deps, by, 'user.role', existing.accountId, userId, {
      email: existing.email,
      role: valid.value,
    });
    const user = await this.deps.store.users.setRole(userId, valid.value, audit, { keepAnOwner: true });
    if (typeof user === 'string') return guardRefusal(user);
    return user ? ok(userRecord(user)) : fail('not_found', `No user "${userId}".`);
  }

  /**
   * Removes the user, and with them (in the same transaction) the OAuth grants they allowed in the
   * account: a connector ends with the person who allowed it. An operator (admin API, CLI) may
   * remove an account's last owner, as an account may have no users at all; the console passes
   * `guard` and may not.
   */
  async remove(userId: string, by?: AuditContext, guard?: MemberGuard): Promise<Result<UserRecord>> {
    // Read first for the account the audit entry names; a user never changes account.
    const existing = await this.deps.store.users.get(userId);
    if (!existing) return fail('not_found', `No user "${userId}".`);
    const audit = draftAudit(this.deps, by, 'user.remove', existing.accountId, userId, {
      email: existing.email,
    });
    const user = await this.deps.store.users.remove(userId, audit, {
      ...guard,
      revokeGrants: { at: now(this.deps), subject: personSubject(this.deps.keySecret, existing.email) },
    });
    if (typeof user === 'string') return guardRefusal(user);
    return user ? ok(userRecord(user)) : fail('not_found', `No user "${userId}".`);
  }
}
