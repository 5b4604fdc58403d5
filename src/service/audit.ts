/** @module The audit trail: drafting an entry for the action a use case is about to take, and reading the trail. */
import {
  type AuditAction,
  type AuditDetails,
  type AuditEntry,
  assertNoCredentials,
} from '../domain/audit.js';
import { fail, ok, type Result } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { DEFAULT_PAGE, MAX_PAGE, now, type ServiceDeps } from './context.js';
import { type AuditRecord, auditRecord } from './views.js';

/**
 * Who acts, passed to each use case that changes something: `admin:<token name>`, `cli:<user>`,
 * `user:<email>`, `system:<what>`. Every change it makes is audited under that name, in the
 * transaction that makes it.
 */
export interface AuditContext {
  readonly actor: string;
}

/** The context of `actor`, for callers that act as one name throughout (a token, the CLI's user). */
export const actingAs = (actor: string): AuditContext => Object.freeze({ actor });

/**
 * The entry for an action, for the store to write with it; none when no one is named as acting
 * (internal callers and tests that use the services bare). The admin API and the CLI always name one.
 */
export function draftAudit<By extends AuditContext | undefined>(
  deps: Pick<ServiceDeps, 'clock'>,
  by: By,
  action: AuditAction,
  accountId: string | null,
  targetId: string | null,
  details: AuditDetails,
): By extends AuditContext ? AuditEntry : AuditEntry | undefined {
  type Drafted = By extends AuditContext ? AuditEntry : AuditEntry | undefined;
  if (by === undefined) return undefined as Drafted;
  return {
    id: newId('aud', deps.clock.now()),
    at: now(deps),
    actor: by.actor,
    action,
    accountId,
    targetId,
    details: assertNoCredentials(details),
  } as Drafted;
}

export interface AuditListInput {
  accountId?: string;
  limit?: number;
  after?: string;
}

export class AuditService {
  constructor(private readonly deps: ServiceDeps) {}

  /** Oldest first (id order); an unknown account is not_found, as every account-scoped list answers. */
  async list(input: AuditListInput = {}): Promise<Result<AuditRecord[]>> {
    const limit = input.limit ?? DEFAULT_PAGE;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE) {
      return fail('invalid_arguments', `limit must be from 1 to ${MAX_PAGE}.`);
    }
    if (input.accountId !== undefined && !(await this.deps.store.accounts.get(input.accountId))) {
      return fail('not_found', `No account "${input.accountId}".`);
    }
    const entries = await this.deps.store.audit.list({
      limit,
      ...(input.accountId !== undefined ? { accountId: input.accountId } : {}),
      ...(input.after !== undefined ? { after: input.after } : {}),
    });
    return ok(entries.map(auditRecord));
  }
}
