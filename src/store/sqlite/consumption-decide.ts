/**
 * @module A batch of SQLite consumptions decided in memory, one by one, in the order of the checks
 * (an idempotent replay, the account, the windows by the domain's reference semantics, then the
 * charge against the balance), each all-or-nothing by itself, on the windows and balances the
 * batch started from as its earlier consumptions left them. What the committed ones write is
 * gathered as it is decided (consumption-writes.ts) and run afterwards, in the batch's transaction,
 * by whichever connection commits it.
 */
import type { AuditEntry } from '../../domain/audit.js';
import { applyConsumption, isRunning } from '../../domain/fair-use.js';
import { findWindow, storedWindowsOf } from '../../domain/fair-use-order.js';
import { newId } from '../../domain/ids.js';
import { ledgerDelta, replayOrConflict } from '../../domain/ledger.js';
import { balanceEvents, thresholdEvents } from '../../domain/webhooks.js';
import type { AccountUsage } from '../changes.js';
import { chargeEntry, type UsageCommit, type UsageOutcome } from '../usage-store.js';
import { ConsumptionWrites } from './consumption-writes.js';

/** A consumption kept for replays: its request's fingerprint and the answer it was given. */
export interface Prior {
  request_hash: string;
  response: string;
}

/** What a batch is decided from, besides what its own consumptions decided. */
export interface DecideReads {
  /** The account's windows, balance and alert level before the batch; undefined: no such account. */
  usage(accountId: string): AccountUsage | undefined;
  /** The consumption recorded with this idempotency key, if any. */
  prior(accountId: string, key: string): Prior | undefined;
}

const priorKey = (accountId: string, key: string) => `${accountId}\0${key}`;

export class BatchDecision {
  readonly writes = new ConsumptionWrites();
  /** Each account consumed from, as the batch has left it so far. */
  readonly decided = new Map<string, AccountUsage>();
  /** The idempotency keys this batch recorded: a later consumption with one replays it. */
  private readonly keyed = new Map<string, Prior>();

  constructor(private readonly reads: DecideReads) {}

  private usageOf(accountId: string): AccountUsage | undefined {
    return this.decided.get(accountId) ?? this.reads.usage(accountId);
  }

  /**
   * One consumption: its outcome, or the error that failed it alone (its answer could not be
   * rendered) before anything of it was written. What the reads throw fails the batch.
   */
  decide(c: UsageCommit, audit: AuditEntry | undefined): UsageOutcome | Error {
    if (c.idempotency) {
      const { key, requestHash } = c.idempotency;
      const prior = this.keyed.get(priorKey(c.accountId, key)) ?? this.reads.prior(c.accountId, key);
      if (prior)
        return replayOrConflict(prior.request_hash, requestHash, () => ({
          kind: 'replayed' as const,
          response: JSON.parse(prior.response),
        }));
    }
    const before = this.usageOf(c.accountId);
    if (!before) return { kind: 'not_found' };
    const applied = applyConsumption(before.windows, c.increments, c.now);
    if (!applied.ok) return { kind: 'exceeded', exceeded: applied.exceeded };
    let balanceAfter: number | null = null;
    if (c.charge) {
      // The same condition as every ledger entry's: the balance stays >= 0.
      balanceAfter = before.tokenBalance + ledgerDelta('charge', c.charge.amount);
      if (balanceAfter < 0) return { kind: 'insufficient', balance: before.tokenBalance };
    }
    // In key order, as applyConsumption keeps them.
    const windows = applied.states;
    let response: unknown;
    try {
      response = c.render(windows, balanceAfter);
    } catch (err) {
      // Before anything of it is written: only this consumption fails.
      return err as Error;
    }
    const w = this.writes;
    const category = c.increments[0]?.category;
    if (category !== undefined)
      w.windows(c.accountId, category, JSON.stringify(storedWindowsOf(windows, category)));
    const stamp = () => ({ id: newId('msg', c.now * 1000), at: c.now });
    if (c.charge && balanceAfter !== null) {
      // Decided from the balance before: each crossing down is this charge's alone.
      w.events(
        balanceEvents(c.accountId, before.tokenBalance, balanceAfter, before.lowBalance ?? null, stamp),
      );
      w.charge(chargeEntry(c, c.charge), before.tokenBalance);
    }
    if (c.idempotency) {
      const text = JSON.stringify(response);
      w.idempotency(c.accountId, c.idempotency.key, c.idempotency.requestHash, text, c.now);
      this.keyed.set(priorKey(c.accountId, c.idempotency.key), {
        request_hash: c.idempotency.requestHash,
        response: text,
      });
    }
    w.audit(audit);
    if (c.thresholds) {
      // The use before is what this batch decided from: each crossing is this consumption's alone.
      const usedBefore = (inc: (typeof c.increments)[number]) => {
        const win = findWindow(before.windows, inc);
        return isRunning(win, c.now) ? win.used : 0;
      };
      w.events(thresholdEvents(c.accountId, c.increments, usedBefore, windows, c.thresholds, stamp));
    }
    // The categories this batch changed for the account: the read cache merges those alone.
    const only =
      category === undefined || before.only?.includes(category)
        ? before.only
        : [...(before.only ?? []), category];
    const after: AccountUsage = {
      windows,
      tokenBalance: balanceAfter ?? before.tokenBalance,
      lowBalance: before.lowBalance ?? null,
    };
    if (only) after.only = only;
    this.decided.set(c.accountId, after);
    return { kind: 'committed', response };
  }
}
