/**
 * @module Use cases on customer alerts: whether a user of an account gets the alert mails, and their
 * own choice to turn them off or on again (audited as them). Only owners are mailed; the choice is
 * each person's, per account.
 */
import { fail, ok, type Result } from '../domain/errors.js';
import { type AuditContext, draftAudit } from './audit.js';
import type { ServiceDeps } from './context.js';

export class AlertService {
  constructor(private readonly deps: ServiceDeps) {}

  /** Whether the account's user `userId` gets the alert mails; not found for another account's user. */
  async mailsOn(accountId: string, userId: string): Promise<Result<boolean>> {
    const user = await this.deps.store.users.get(userId);
    if (!user || user.accountId !== accountId) return fail('not_found', `No user "${userId}".`);
    const on = await this.deps.store.alerts.mailsOn(userId);
    return on === undefined ? fail('not_found', `No user "${userId}".`) : ok(on);
  }

  /** Turns the user's alert mails on or off (`on`: a boolean); audited when the choice changed. */
  async setMailsOn(
    accountId: string,
    userId: string,
    on: unknown,
    by?: AuditContext,
  ): Promise<Result<boolean>> {
    if (typeof on !== 'boolean') return fail('invalid_arguments', 'alert_mails must be true or false.');
    const user = await this.deps.store.users.get(userId);
    if (!user || user.accountId !== accountId) return fail('not_found', `No user "${userId}".`);
    const audit = draftAudit(this.deps, by, 'user.alerts', accountId, userId, {
      email: user.email,
      alert_mails: on,
    });
    if (!(await this.deps.store.alerts.setMailsOn(userId, on, audit)))
      return fail('not_found', `No user "${userId}".`);
    return ok(on);
  }
}
