/**
 * @module SQLite's group commit of consumptions: those that arrive together are decided one by one
 * under the write lock and committed in one transaction, so they share one fdatasync; each is
 * still all-or-nothing by itself. Decided on the windows and balances the observer knows (exact
 * once the data_version check has reported other processes' commits), else read.
 */
import type { AuditEntry } from '../../domain/audit.js';
import { StoreUnavailableError } from '../../domain/errors.js';
import { applyConsumption, isRunning } from '../../domain/fair-use.js';
import { findWindow } from '../../domain/fair-use-order.js';
import { newId } from '../../domain/ids.js';
import { ledgerDelta, replayOrConflict } from '../../domain/ledger.js';
import { thresholdEvents } from '../../domain/webhooks.js';
import type { AccountUsage, Change } from '../changes.js';
import { chargeEntry, type UsageCommit, type UsageOutcome, type UsageStore } from '../usage-store.js';
import { writeAudit } from './audit.js';
import type { SqliteExecutor } from './executor.js';
import type { FairUseSql } from './fair-use-sql.js';
import { applyLedger } from './ledger.js';
import { recordEvents } from './webhooks.js';

/** Most consumptions written by one group commit. */
const MAX_USAGE_BATCH = 500;
/**
 * Most turns of the event loop a group commit waits for more consumptions while they keep arriving.
 * Each batch has a fixed cost on the event loop whatever its size (the write lock, the COMMIT's WAL
 * writes, handing the fdatasync to the thread pool and waking for its end: some twenty system calls);
 * under load a wait of up to three turns makes batches about three times larger. It never leaves the
 * loop idle: while a callback of setImmediate is queued, the loop polls for I/O without blocking.
 */
const MAX_WAIT_TURNS = 3;

interface PendingUsage {
  c: UsageCommit;
  audit?: AuditEntry;
  resolve: (outcome: UsageOutcome) => void;
  reject: (err: unknown) => void;
}

/** A group commit's outcomes, and the windows and balance it left each account it consumed from. */
interface BatchResult {
  outcomes: (UsageOutcome | Error)[];
  decided: Map<string, AccountUsage>;
}

export class GroupCommit implements UsageStore {
  private pendingUsage: PendingUsage[] = [];
  private usageFlushScheduled = false;
  /** Turns the pending consumptions have waited, and how many were pending at the last one. */
  private turnsWaited = 0;
  private pendingAtLastTurn = 0;
  private readonly consumeBatchTx: { immediate(batch: PendingUsage[]): BatchResult };

  constructor(
    private readonly x: SqliteExecutor,
    private readonly windows: FairUseSql,
  ) {
    // The group commit's transaction: each consumption of the batch all-or-nothing by itself.
    this.consumeBatchTx = x.db.transaction((batch: PendingUsage[]) => {
      // Under the write lock from here to COMMIT: once other processes' commits are reported, what
      // the observer knows of windows and balances is the database's, and nothing else can change it.
      x.checkDataVersion();
      const decided = new Map<string, AccountUsage>();
      return { outcomes: batch.map((item) => this.consumeInBatch(item.c, item.audit, decided)), decided };
    });
  }

  /**
   * Consumptions are written in one transaction, so they share one fdatasync. While
   * the WAL's fdatasync runs, those that arrive are held and committed the moment it ends, just
   * before the next one starts: they could not be durable any sooner, and the batch is as large as
   * it can be. Otherwise they are committed at the end of a turn of the event loop, that in which the
   * first came or, while more keep coming, up to two turns later (atTurnEnd). Each is still
   * all-or-nothing by itself (decided before its first write), and each caller is answered
   * only once the shared COMMIT is durable.
   */
  commit(c: UsageCommit, audit?: AuditEntry): Promise<UsageOutcome> {
    return new Promise<UsageOutcome>((resolve, reject) => {
      this.pendingUsage.push(audit ? { c, audit, resolve, reject } : { c, resolve, reject });
      if (!this.usageFlushScheduled) {
        this.usageFlushScheduled = true;
        if (this.x.walSync?.busy) this.x.walSync.beforeNext(this.flushHeldUsage);
        else {
          this.turnsWaited = 0;
          this.pendingAtLastTurn = this.pendingUsage.length;
          setImmediate(this.atTurnEnd);
        }
      }
    });
  }

  /**
   * At the end of a turn with no fdatasync running: commit now, unless more consumptions arrived
   * during the turn (more are likely on their way), then wait for the next turn, at most
   * MAX_WAIT_TURNS in all. A lone consumption is committed at the end of the turn it came in.
   */
  private readonly atTurnEnd = () => {
    if (this.x.walSync?.busy) {
      this.x.walSync.beforeNext(this.flushHeldUsage);
      return;
    }
    const pending = this.pendingUsage.length;
    if (
      ++this.turnsWaited < MAX_WAIT_TURNS &&
      pending > this.pendingAtLastTurn &&
      pending < MAX_USAGE_BATCH
    ) {
      this.pendingAtLastTurn = pending;
      setImmediate(this.atTurnEnd);
      return;
    }
    void this.flushUsage();
  };

  /** flushUsage, as a callback made once (no closure per batch). */
  private readonly flushHeldUsage = () => void this.flushUsage();

  private async flushUsage(): Promise<void> {
    this.usageFlushScheduled = false;
    const batch = this.pendingUsage.splice(0, MAX_USAGE_BATCH);
    if (this.pendingUsage.length > 0) {
      this.usageFlushScheduled = true;
      setImmediate(this.flushHeldUsage);
    }
    try {
      const { outcomes } = await this.x.write(
        () => this.consumeBatchTx.immediate(batch),
        // Committed in this synchronous step, under the write lock: each account consumed is reported
        // with the windows and balance it was left with. Refused ones changed nothing; a failed batch
        // reports every account it held.
        (result): Change[] => {
          const changes: Change[] = [];
          if (!result) {
            for (const item of batch) changes.push({ account: item.c.accountId });
            return changes;
          }
          for (const [account, after] of result.decided) changes.push({ account, after });
          return changes;
        },
      );
      batch.forEach((item, i) => {
        const outcome = outcomes[i]!;
        if (outcome instanceof Error) item.reject(outcome);
        else item.resolve(outcome);
      });
    } catch (err) {
      for (const item of batch) item.reject(err);
    }
  }

  /**
   * One consumption inside the batch's transaction. A refusal, or a failure before its first write,
   * answers for this consumption alone; a failure of the database, or one after a write, fails the
   * whole batch (its COMMIT could not stand).
   */
  private consumeInBatch(
    c: UsageCommit,
    audit: AuditEntry | undefined,
    decided: Map<string, AccountUsage>,
  ): UsageOutcome | Error {
    try {
      return this.consume(c, audit, decided);
    } catch (err) {
      if (err instanceof StoreUnavailableError || (err as { code?: string }).code?.startsWith('SQLITE_IOERR'))
        throw err;
      return err as Error;
    }
  }

  /**
   * An account's windows and balance as they stand in this transaction: as an earlier consumption
   * of the batch left them, else as cached (exact under the write lock once the data version was
   * checked: every commit of this process updates or forgets what it touched), else read.
   * Undefined: no such account.
   */
  private usageOf(accountId: string, decided: Map<string, AccountUsage>): AccountUsage | undefined {
    const earlier = decided.get(accountId);
    if (earlier) return earlier;
    const known = this.x.observer?.usage(accountId);
    if (known) return known;
    const account = this.x.sql('SELECT token_balance FROM accounts WHERE id = ?').get(accountId) as
      | { token_balance: number }
      | undefined;
    return account && { windows: this.windows.windowsOf(accountId), tokenBalance: account.token_balance };
  }

  /** The answer, kept for replays when the consumption has an idempotency key. */
  private keepForReplay(c: UsageCommit, response: unknown): void {
    if (!c.idempotency) return;
    this.x
      .sql(
        `INSERT INTO usage_idempotency (account_id, idempotency_key, request_hash, response, created_at)
       VALUES (?, ?, ?, ?, ?)`,
      )
      .run(c.accountId, c.idempotency.key, c.idempotency.requestHash, JSON.stringify(response), c.now);
  }

  /**
   * One consumption, in no savepoint of its own: everything that could refuse it is decided before
   * its first write, in the order of the checks (an idempotent replay, the account, the windows by
   * the domain's reference semantics, then the charge against the balance). Nothing can change in
   * between (the same synchronous step, under the write lock), so the writes cannot be refused; the
   * windows and balance after are the ones decided, not read back. Should a write fail anyway, the
   * whole batch fails rather than keep half a consumption.
   */
  private consume(
    c: UsageCommit,
    audit: AuditEntry | undefined,
    decided: Map<string, AccountUsage>,
  ): UsageOutcome {
    if (c.idempotency) {
      const prior = this.x
        .sql(
          'SELECT request_hash, response FROM usage_idempotency WHERE account_id = ? AND idempotency_key = ?',
        )
        .get(c.accountId, c.idempotency.key) as { request_hash: string; response: string } | undefined;
      if (prior) {
        return replayOrConflict(prior.request_hash, c.idempotency.requestHash, () => ({
          kind: 'replayed' as const,
          response: JSON.parse(prior.response),
        }));
      }
    }
    const before = this.usageOf(c.accountId, decided);
    if (!before) return { kind: 'not_found' };
    const applied = applyConsumption(before.windows, c.increments, c.now);
    if (!applied.ok) return { kind: 'exceeded', exceeded: applied.exceeded };
    let balanceAfter: number | null = null;
    if (c.charge) {
      // The same condition as applyLedger's conditional update: the balance stays >= 0.
      balanceAfter = before.tokenBalance + ledgerDelta('charge', c.charge.amount);
      if (balanceAfter < 0) return { kind: 'insufficient', balance: before.tokenBalance };
    }
    // In key order, as applyConsumption keeps them.
    const windows = applied.states;
    // Before the first write: should rendering fail, only this consumption does.
    const response = c.render(windows, balanceAfter);
    try {
      this.windows.writeWindows(c, windows);
      if (c.charge) {
        const charged = applyLedger(this.x, chargeEntry(c, c.charge));
        if (charged.kind !== 'applied' || charged.entry.balanceAfter !== balanceAfter)
          throw new Error(`the charge was not applied as decided (${charged.kind})`);
      }
      this.keepForReplay(c, response);
      writeAudit(this.x, audit);
      if (c.thresholds) {
        // The use before is what this transaction decided from: each crossing is this consumption's alone.
        const usedBefore = (inc: (typeof c.increments)[number]) => {
          const w = findWindow(before.windows, inc);
          return isRunning(w, c.now) ? w.used : 0;
        };
        const stamp = () => ({ id: newId('msg', c.now * 1000), at: c.now });
        recordEvents(
          this.x,
          thresholdEvents(c.accountId, c.increments, usedBefore, windows, c.thresholds, stamp),
        );
      }
    } catch (err) {
      throw new StoreUnavailableError(
        `a consumption failed after its first write, so its batch is not committed: ${(err as Error).message}`,
      );
    }
    // The categories this batch changed for the account: the read cache merges those alone.
    const category = c.increments[0]?.category;
    const only =
      category === undefined || before.only?.includes(category)
        ? before.only
        : [...(before.only ?? []), category];
    decided.set(c.accountId, {
      windows,
      tokenBalance: balanceAfter ?? before.tokenBalance,
      ...(only ? { only } : {}),
    });
    return { kind: 'committed', response };
  }
}
