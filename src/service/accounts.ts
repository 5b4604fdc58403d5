/** @module Use cases on accounts: create (with an opening grant), read, list, update. */
import { type Account, validateAccountName, validateStatusChange } from '../domain/accounts.js';
import type { AuditDetails } from '../domain/audit.js';
import { fail, ok, type Result } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { fingerprint, MAX_TOKENS } from '../domain/ledger.js';
import type { AccountPatch } from '../store/store.js';
import { type AuditContext, draftAudit } from './audit.js';
import { DEFAULT_PAGE, MAX_PAGE, now, type ServiceDeps } from './context.js';
import { type AdminAccountRecord, adminAccountRecord } from './views.js';

export interface CreateAccountInput {
  name: unknown;
  plan?: unknown;
  unlimited?: unknown;
  tokens?: unknown;
}

export interface UpdateAccountInput {
  name?: unknown;
  plan?: unknown;
  status?: unknown;
  unlimited?: unknown;
  /** Below this balance `tokens.low_balance` fires; null: never. */
  low_balance?: unknown;
}

export const DEFAULT_PLAN = 'free';

export class AccountService {
  constructor(private readonly deps: ServiceDeps) {}

  async create(input: CreateAccountInput, by?: AuditContext): Promise<Result<AdminAccountRecord>> {
    const drafted = await this.draft(input, by);
    if (!drafted.ok) return drafted;
    const { account, grant, audit } = drafted.value;
    await this.deps.store.accounts.create(account, grant, audit);
    return this.get(account.id);
  }

  /**
   * create, only while the database has no account, decided in the transaction that inserts it: of
   * servers starting together on an empty database, one makes its first-run account. Undefined
   * when another account was there first.
   */
  async createFirst(
    input: CreateAccountInput,
    by?: AuditContext,
  ): Promise<Result<AdminAccountRecord> | undefined> {
    const drafted = await this.draft(input, by);
    if (!drafted.ok) return drafted;
    const { account, grant, audit } = drafted.value;
    if (!(await this.deps.store.accounts.createFirst(account, grant, audit))) return undefined;
    return this.get(account.id);
  }

  /** The account an input makes, with its opening grant and audit entry; or why it is refused. */
  private async draft(input: CreateAccountInput, by: AuditContext | undefined) {
    const name = validateAccountName(input.name);
    if (!name.ok) return name;
    const planId = input.plan ?? DEFAULT_PLAN;
    if (typeof planId !== 'string' || !(await this.deps.store.plans.get(planId))) {
      return fail('invalid_arguments', `Unknown plan "${String(planId)}".`);
    }
    if (input.unlimited !== undefined && input.unlimited !== null && typeof input.unlimited !== 'boolean') {
      return fail('invalid_arguments', 'unlimited must be true or false.');
    }
    const tokens = input.tokens ?? 0;
    if (typeof tokens !== 'number' || !Number.isSafeInteger(tokens) || tokens < 0 || tokens > MAX_TOKENS) {
      return fail('invalid_arguments', `tokens must be a whole number from 0 to ${MAX_TOKENS}.`);
    }
    const t = now(this.deps);
    const account: Account = {
      id: newId('acc', this.deps.clock.now()),
      name: name.value,
      planId,
      status: 'active',
      unlimitedOverride: (input.unlimited as boolean | undefined) ?? null,
      tokenBalance: 0,
      createdAt: t,
      updatedAt: t,
      planSince: t,
      lowBalance: null,
    };
    const grant =
      tokens > 0
        ? {
            id: newId('led', this.deps.clock.now()),
            accountId: account.id,
            kind: 'grant' as const,
            amount: tokens,
            reason: 'opening balance',
            idempotencyKey: null,
            requestHash: fingerprint({ kind: 'grant', amount: tokens }),
            createdAt: t,
          }
        : undefined;
    const audit = draftAudit(this.deps, by, 'account.create', account.id, null, {
      name: account.name,
      plan: planId,
      unlimited: account.unlimitedOverride,
      tokens,
    });
    return ok({ account, grant, audit });
  }

  async get(id: string): Promise<Result<AdminAccountRecord>> {
    const snapshot = await this.deps.store.accounts.snapshot(id);
    return snapshot
      ? ok(adminAccountRecord(snapshot, now(this.deps)))
      : fail('not_found', `No account "${id}".`);
  }

  async list(limit: number = DEFAULT_PAGE, after?: string): Promise<Result<AdminAccountRecord[]>> {
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE) {
      return fail('invalid_arguments', `limit must be from 1 to ${MAX_PAGE}.`);
    }
    const accounts = await this.deps.store.accounts.list(after === undefined ? { limit } : { limit, after });
    const t = now(this.deps);
    const records: AdminAccountRecord[] = [];
    for (const a of accounts) {
      const s = await this.deps.store.accounts.snapshot(a.id);
      if (s) records.push(adminAccountRecord(s, t));
    }
    return ok(records);
  }

  async update(
    id: string,
    input: UpdateAccountInput,
    by?: AuditContext,
  ): Promise<Result<AdminAccountRecord>> {
    const current = await this.deps.store.accounts.get(id);
    if (!current) return fail('not_found', `No account "${id}".`);
    const patch: AccountPatch = {};
    if (input.name !== undefined) {
      const name = validateAccountName(input.name);
      if (!name.ok) return name;
      patch.name = name.value;
    }
    if (input.plan !== undefined) {
      if (typeof input.plan !== 'string' || !(await this.deps.store.plans.get(input.plan))) {
        return fail('invalid_arguments', `Unknown plan "${String(input.plan)}".`);
      }
      patch.planId = input.plan;
    }
    if (input.status !== undefined) {
      const status = validateStatusChange(current.status, String(input.status));
      if (!status.ok) return status;
      patch.status = status.value;
    }
    if (input.unlimited !== undefined) {
      if (input.unlimited !== null && typeof input.unlimited !== 'boolean') {
        return fail('invalid_arguments', 'unlimited must be true, false or null (follow the plan).');
      }
      patch.unlimitedOverride = input.unlimited;
    }
    if (input.low_balance !== undefined) {
      const low = input.low_balance;
      if (low !== null && (!Number.isSafeInteger(low) || (low as number) < 1))
        return fail(
          'invalid_arguments',
          'low_balance must be a whole number of tokens of at least 1, or null (never).',
        );
      patch.lowBalance = low as number | null;
    }
    if (Object.keys(patch).length === 0) return fail('invalid_arguments', 'Nothing to update.');
    const audit = draftAudit(this.deps, by, 'account.update', id, null, askedFields(patch));
    await this.deps.store.accounts.update(id, patch, now(this.deps), audit);
    return this.get(id);
  }
}

/** A patch in the admin API's names: what the audit trail records of an update. */
function askedFields(patch: AccountPatch): AuditDetails {
  const asked: AuditDetails = {};
  if (patch.name !== undefined) asked.name = patch.name;
  if (patch.planId !== undefined) asked.plan = patch.planId;
  if (patch.status !== undefined) asked.status = patch.status;
  if (patch.unlimitedOverride !== undefined) asked.unlimited = patch.unlimitedOverride;
  if (patch.lowBalance !== undefined) asked.low_balance = patch.lowBalance;
  return asked;
}
