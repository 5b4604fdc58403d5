/** @module Use cases on the token ledger: grant, charge, adjust (idempotent by key), and the ledger itself. */
import { isUnlimited } from '../domain/accounts.js';
import { fail, ok, type Result } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { fingerprint, MAX_BALANCE, validateLedgerRequest } from '../domain/ledger.js';
import { type AuditContext, draftAudit } from './audit.js';
import { DEFAULT_PAGE, MAX_PAGE, now, type ServiceDeps } from './context.js';
import { ledgerRecord } from './views.js';

export type LedgerRecord = ReturnType<typeof ledgerRecord>;

export interface TokenAnswer {
  /** The entry written (or the one first written under this idempotency key); null when nothing was charged. */
  entry: LedgerRecord | null;
  /** The balance after, as `get_account` shows it (-1 when unlimited). */
  token_balance: number;
  replayed: boolean;
}

export interface TokenInput {
  kind: unknown;
  amount: unknown;
  reason?: unknown;
  idempotency_key?: unknown;
}

export class TokenService {
  constructor(private readonly deps: ServiceDeps) {}

  async apply(accountId: string, input: TokenInput, by?: AuditContext): Promise<Result<TokenAnswer>> {
    const req = validateLedgerRequest(input.kind, input.amount, input.reason, input.idempotency_key);
    if (!req.ok) return req;
    const snapshot = await this.deps.store.accounts.snapshot(accountId);
    if (!snapshot) return fail('not_found', `No account "${accountId}".`);
    const unlimited = isUnlimited(snapshot.account, snapshot.plan);
    // Unlimited accounts are never charged; grants and adjustments still move the stored balance.
    if (unlimited && req.value.kind === 'charge')
      return ok({ entry: null, token_balance: -1, replayed: false });
    const { kind, amount, reason, idempotencyKey } = req.value;
    const entryId = newId('led', this.deps.clock.now());
    const audit = draftAudit(this.deps, by, `tokens.${kind}`, accountId, entryId, {
      amount,
      reason,
      idempotency_key: idempotencyKey,
    });
    const outcome = await this.deps.store.ledger.append(
      {
        id: entryId,
        accountId,
        kind,
        amount,
        reason,
        idempotencyKey,
        requestHash: fingerprint({ kind, amount, reason }),
        createdAt: now(this.deps),
      },
      audit,
    );
    switch (outcome.kind) {
      case 'applied':
      case 'replayed':
        return ok({
          entry: ledgerRecord(outcome.entry),
          token_balance: unlimited ? -1 : outcome.entry.balanceAfter,
          replayed: outcome.kind === 'replayed',
        });
      case 'insufficient':
        return fail(
          'insufficient_tokens',
          `The account has ${outcome.balance} tokens; ${Math.abs(amount)} cannot be ${kind === 'charge' ? 'charged' : 'taken away'}.`,
          { token_balance: outcome.balance },
        );
      case 'over_maximum':
        return fail(
          'invalid_arguments',
          `A balance holds at most ${MAX_BALANCE} tokens; the account has ${outcome.balance}, so ${amount} more cannot be ${kind === 'grant' ? 'granted' : 'added'}.`,
          { token_balance: outcome.balance, max_balance: MAX_BALANCE },
        );
      case 'idempotency_conflict':
        return fail('idempotency_conflict');
      case 'not_found':
        return fail('not_found', `No account "${accountId}".`);
    }
  }

  async ledger(
    accountId: string,
    limit: number = DEFAULT_PAGE,
    after?: string,
  ): Promise<Result<LedgerRecord[]>> {
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE) {
      return fail('invalid_arguments', `limit must be from 1 to ${MAX_PAGE}.`);
    }
    if (!(await this.deps.store.accounts.get(accountId)))
      return fail('not_found', `No account "${accountId}".`);
    const entries = await this.deps.store.ledger.list(
      accountId,
      after === undefined ? { limit } : { limit, after },
    );
    return ok(entries.map(ledgerRecord));
  }
}
