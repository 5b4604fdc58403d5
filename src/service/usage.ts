/**
 * @module Fair-use metering: one call checks and consumes atomically (windows, optionally tokens, and
 * the idempotency record in one transaction). The admin usage endpoint, the CLI and metered tools
 * all go through `meter`.
 */
import { isUnlimited, statusRefusal } from '../domain/accounts.js';
import type { AuditEntry } from '../domain/audit.js';
import { fail, ok, type Result } from '../domain/errors.js';
import {
  type Amounts,
  applyConsumption,
  type CategoryView,
  categoryView,
  checkKnown,
  exceededFailure,
  type FairUseMetadata,
  type FairUseView,
  fairUseMetadata,
  incrementsFor,
  validateAmounts,
  type WindowState,
} from '../domain/fair-use.js';
import { newId } from '../domain/ids.js';
import { fingerprint, validateIdempotencyKey } from '../domain/ledger.js';
import type { Category, Unit } from '../domain/plans.js';
import type { AccountSnapshot, UsageCommit, UsageOutcome } from '../store/store.js';
import { type AuditContext, draftAudit } from './audit.js';
import { now, type ServiceDeps } from './context.js';

export interface UsageAnswer {
  account_id: string;
  category: Category;
  recorded: Amounts;
  fair_use: Partial<FairUseView> | Record<Category, CategoryView>;
  metadata: { fair_use: FairUseMetadata };
}

export interface MeterRequest<T> {
  snapshot: AccountSnapshot;
  category: Category;
  amounts: Amounts;
  /** Tokens to charge in the same transaction (ignored for unlimited accounts). */
  tokenCost?: number;
  reason?: string;
  idempotency?: { key: string; payload: unknown };
  /**
   * Builds the answer from the windows after the consumption (stored for idempotent replays), and
   * the balance after its charge (null when nothing was charged).
   */
  render: (windows: WindowState[], nowSeconds: number, balanceAfter: number | null) => T;
  /** Written with the consumption, if it is committed: the CLI's records only, never metering traffic. */
  audit?: AuditEntry;
}

/** The usage endpoint's and the CLI's body: `records` (and `requests`), or a `unit` and its `amount`. */
export interface UsageInput {
  category?: unknown;
  records?: unknown;
  requests?: unknown;
  unit?: unknown;
  amount?: unknown;
  idempotency_key?: unknown;
}

/**
 * The amounts a usage body names: `{records, requests}` as the seed system has them (requests 1
 * unless given), or `{unit, amount}` (with one request too, unless given, when the unit is not
 * requests). Either form, not both.
 */
function amountsOf(input: UsageInput): Result<Record<string, unknown>> {
  if (input.unit === undefined && input.amount === undefined)
    return ok({ records: input.records ?? 0, requests: input.requests ?? 1 });
  if (input.records !== undefined)
    return fail('invalid_arguments', 'Give either records or unit and amount, not both.');
  if (typeof input.unit !== 'string' || input.unit.length === 0)
    return fail('invalid_arguments', 'unit must name a unit of the plan, such as records or pages.');
  if (input.amount === undefined) return fail('invalid_arguments', `amount is required with unit.`);
  if (input.unit === 'requests') {
    if (input.requests !== undefined)
      return fail('invalid_arguments', 'Give requests either as requests or as the unit, not both.');
    return ok({ requests: input.amount });
  }
  return ok({ [input.unit]: input.amount, requests: input.requests ?? 1 });
}

export class UsageService {
  /** Requests let through by `hold` and not yet committed, by account and category. */
  private readonly inFlight = new Map<string, Map<Category, number>>();

  constructor(private readonly deps: ServiceDeps) {}

  /**
   * The usage endpoint's and the CLI's entry: validate, then meter with the usage answer as the
   * rendered response. Audited only when `opts.audit` says so (the CLI, an operator's hand): the
   * usage endpoint is metering traffic, a tool served elsewhere consuming as a metered tool call
   * does, and like one it is not audited (an entry per consumption would grow the trail at the
   * rate of the traffic, and cost more than the consumption itself).
   */
  record(
    accountId: string,
    input: UsageInput,
    by?: AuditContext,
  ): Promise<Result<{ response: UsageAnswer; replayed: boolean }>> {
    const given = amountsOf(input);
    if (!given.ok) return Promise.resolve(given);
    const category = String(input.category);
    // The unit the answer's metadata summarises: the one given, else records (as before units).
    const unit = input.unit === undefined ? 'records' : String(input.unit);
    const amounts = validateAmounts(category, given.value);
    if (!amounts.ok) return Promise.resolve(amounts);
    const idem = validateIdempotencyKey(input.idempotency_key);
    if (!idem.ok) return Promise.resolve(idem);
    const meterOn = (snapshot: AccountSnapshot | undefined) => {
      if (!snapshot) return Promise.resolve(fail('not_found', `No account "${accountId}".`));
      const known = checkKnown(snapshot.plan.limits, category, amounts.value);
      if (!known.ok) return Promise.resolve(known);
      return this.recordFor(snapshot, category, unit, amounts.value, idem.value, by);
    };
    // An account in memory is metered without waiting for a read.
    const snapshot = this.deps.reads.getSnapshot(accountId);
    return snapshot instanceof Promise ? snapshot.then(meterOn) : meterOn(snapshot);
  }

  private recordFor(
    snapshot: AccountSnapshot,
    category: Category,
    unit: Unit,
    amounts: Amounts,
    idempotencyKey: string | null,
    by: AuditContext | undefined,
  ): Promise<Result<{ response: UsageAnswer; replayed: boolean }>> {
    const accountId = snapshot.account.id;
    const req: MeterRequest<UsageAnswer> = {
      snapshot,
      category,
      amounts,
      render: (windows, t) => ({
        account_id: accountId,
        category,
        recorded: amounts,
        fair_use: { [category]: categoryView(snapshot.plan.limits, windows, category, t) },
        metadata: { fair_use: fairUseMetadata(snapshot.plan.limits, windows, category, t, unit) },
      }),
    };
    if (idempotencyKey !== null) req.idempotency = { key: idempotencyKey, payload: { category, ...amounts } };
    if (by) {
      req.audit = draftAudit(this.deps, by, 'usage.record', accountId, null, {
        category,
        ...amounts,
        idempotency_key: idempotencyKey,
      });
    }
    return this.meter(req);
  }

  /**
   * Read-only: would this consumption and charge be accepted now? Status, then fair use, then
   * tokens. Lets a metered tool refuse before doing any work; `meter` decides for real.
   * `requestsInFlight` are requests already let through and not yet committed (see `hold`).
   */
  precheck(
    snapshot: AccountSnapshot,
    category: Category,
    amounts: Amounts,
    tokenCost: number,
    requestsInFlight = 0,
  ): Result<void> {
    const { account, plan } = snapshot;
    const refused = statusRefusal(account.status);
    if (refused) return refused;
    const t = now(this.deps);
    const checked =
      requestsInFlight === 0 ? amounts : { ...amounts, requests: (amounts.requests ?? 0) + requestsInFlight };
    const check = applyConsumption(snapshot.windows, incrementsFor(plan.limits, category, checked), t);
    if (!check.ok) return exceededFailure(check.exceeded);
    if (!isUnlimited(account, plan) && tokenCost > account.tokenBalance) {
      return fail(
        'insufficient_tokens',
        `The account has ${account.tokenBalance} tokens; this call costs ${tokenCost}.`,
        {
          token_balance: account.tokenBalance,
        },
      );
    }
    return ok(undefined);
  }

  /**
   * precheck, counting this process's calls of the account's category still on their way, and on
   * success one more of them until `release`. So a burst on a nearly spent quota sends the tool no
   * more calls than the requests left, instead of letting every call through to be refused at its
   * commit after the work was done. Only requests are held: each call that is answered consumes
   * exactly one, while its records are an estimate and holding them would refuse calls that fit.
   */
  hold(
    snapshot: AccountSnapshot,
    category: Category,
    amounts: Amounts,
    tokenCost: number,
  ): Result<{ release: () => void }> {
    // By the account id the snapshot holds (its hash is kept), not a key string made per call.
    const accountId = snapshot.account.id;
    const held = this.inFlight.get(accountId);
    const already = held?.get(category) ?? 0;
    const checked = this.precheck(snapshot, category, amounts, tokenCost, already);
    if (!checked.ok) return checked;
    const counts = held ?? new Map<Category, number>();
    if (!held) this.inFlight.set(accountId, counts);
    const requests = amounts.requests ?? 0;
    counts.set(category, already + requests);
    let released = false;
    return ok({
      release: () => {
        if (released) return;
        released = true;
        const left = (counts.get(category) ?? 0) - requests;
        if (left > 0) counts.set(category, left);
        else counts.delete(category);
        // Removed only once nothing is held: a later hold then starts a fresh entry.
        if (counts.size === 0) this.inFlight.delete(accountId);
      },
    });
  }

  /** Status, then fair use, then tokens, in one atomic commit; a refusal spends nothing. */
  meter<T>(req: MeterRequest<T>): Promise<Result<{ response: T; replayed: boolean }>> {
    const { account, plan } = req.snapshot;
    const refused = statusRefusal(account.status);
    if (refused) return Promise.resolve(refused);
    const t = now(this.deps);
    const cost = isUnlimited(account, plan) ? 0 : (req.tokenCost ?? 0);
    // Built by assignment, not spread: spreading optional parts costs megamorphic lookups per call.
    const commit: UsageCommit = {
      accountId: account.id,
      increments: incrementsFor(plan.limits, req.category, req.amounts),
      now: t,
      render: (windows, balanceAfter) => req.render(windows, t, balanceAfter),
    };
    if (cost > 0)
      commit.charge = {
        entryId: newId('led', this.deps.clock.now()),
        amount: cost,
        reason: req.reason ?? null,
      };
    const thresholds = this.deps.webhookInterest?.thresholdsFor(account.id);
    if (thresholds) commit.thresholds = thresholds;
    if (req.idempotency)
      commit.idempotency = { key: req.idempotency.key, requestHash: fingerprint(req.idempotency.payload) };
    const committed = this.deps.store.usage.commit(commit, req.audit);
    const metrics = this.deps.metrics;
    return committed.then((outcome) => {
      metrics?.consumption(outcome.kind);
      return meterResult<T>(outcome, account.id, cost);
    });
  }
}

/** What a store's outcome of a consumption means for its caller. */
function meterResult<T>(
  outcome: UsageOutcome,
  accountId: string,
  cost: number,
): Result<{ response: T; replayed: boolean }> {
  switch (outcome.kind) {
    case 'committed':
      return ok({ response: outcome.response as T, replayed: false });
    case 'replayed':
      return ok({ response: outcome.response as T, replayed: true });
    case 'exceeded':
      return exceededFailure(outcome.exceeded);
    case 'insufficient':
      return fail(
        'insufficient_tokens',
        `The account has ${outcome.balance} tokens; this call costs ${cost}.`,
        {
          token_balance: outcome.balance,
        },
      );
    case 'idempotency_conflict':
      return fail('idempotency_conflict');
    case 'not_found':
      return fail('not_found', `No account "${accountId}".`);
  }
}
