/** @module Use cases on the users of an account. */
import { fail, ok, type Result } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { validateUser } from '../domain/users.js';
import { type AuditContext, draftAudit } from './audit.js';
import { now, type ServiceDeps } from './context.js';
import { userRecord } from './views.js';

export type UserRecord = ReturnType<typeof userRecord>;

export class UserService {
  constructor(private readonly deps: ServiceDeps) {}

  async add(
    accountId: string,
    email: unknown,
    role?: unknown,
    by?: AuditContext,
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
    const outcome = await this.deps.store.users.add(user, audit);
    if (outcome === 'duplicate')
      return fail('conflict', `The account already has a user ${valid.value.email}.`);
    return ok(userRecord(user));
  }

  async list(accountId: string): Promise<Result<UserRecord[]>> {
    if (!(await this.deps.store.accounts.get(accountId)))
      return fail('not_found', `No account "${accountId}".`);
    return ok((await this.deps.store.users.list(accountId)).map(userRecord));
  }

  async remove(userId: string, by?: AuditContext): Promise<Result<UserRecord>> {
    // Read first for the account the audit entry names; a user never changes account.
    const existing = await this.deps.store.users.get(userId);
    if (!existing) return fail('not_found', `No user "${userId}".`);
    const audit = draftAudit(this.deps, by, 'user.remove', existing.accountId, userId, {
      email: existing.email,
    });
    const user = await this.deps.store.users.remove(userId, audit);
    return user ? ok(userRecord(user)) : fail('not_found', `No user "${userId}".`);
  }
}
