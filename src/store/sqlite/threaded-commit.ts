/**
 * @module A batch of SQLite consumptions committed through the writer thread (writer.ts): decided on
 * the event loop, ahead of the write lock, on the windows and balances the batches still under way
 * in the thread leave (kept here until the thread answers), else on the read cache's, else read;
 * then written, committed and made durable by the thread, and answered. The thread writes a batch
 * only if nothing it was decided on could have changed meanwhile: no other process committed, and
 * every balance lands where it was decided (writer-thread.ts). A batch it does not write comes
 * back as `conflict`, and the caller decides it again under the lock, on the event loop.
 */

import type { AuditEntry } from '../../domain/audit.js';
import { StoreUnavailableError } from '../../domain/errors.js';
import { type AccountUsage, type Change, report } from '../changes.js';
import type { UsageCommit, UsageOutcome } from '../usage-store.js';
import { BatchDecision, type DecideReads } from './consumption-decide.js';
import type { SqliteExecutor } from './executor.js';
import type { SqliteWriter } from './writer.js';

export interface PendingUsage {
  c: UsageCommit;
  audit?: AuditEntry;
  resolve: (outcome: UsageOutcome) => void;
  reject: (err: unknown) => void;
}

/** An account as a batch under way in the thread leaves it, and the baseline it was decided under. */
interface InFlight {
  after: AccountUsage;
  epoch: number;
  batch: number;
}

/** Thrown while deciding: an account is left by a batch of an older baseline; decided under the lock instead. */
const OLDER_BASELINE = new Error('decided under an older baseline');

export class ThreadedCommit {
  private readonly inFlight = new Map<string, InFlight>();
  private batches = 0;

  constructor(
    private readonly x: SqliteExecutor,
    /** The windows and balances before any batch under way: cached, else read. */
    private readonly committed: DecideReads,
  ) {}

  /**
   * Decides `batch` and has `writer` commit it. Resolves with the consumptions to decide again under
   * the lock (none once the batch is answered): all of them when the thread did not write it, or
   * when one of its accounts is left by a batch decided under an older baseline.
   */
  async commit(writer: SqliteWriter, batch: PendingUsage[]): Promise<PendingUsage[]> {
    // While the checkpoint thread starts the WAL over, batches wait in memory (checkpointer.ts).
    const held = this.x.checkpointer?.held;
    if (held) await held;
    // Other processes' commits first: the cache forgets what they may have changed, a new baseline.
    this.x.checkDataVersion();
    const epoch = writer.own.epoch;
    const decision = new BatchDecision(this.reads(epoch));
    let outcomes: (UsageOutcome | Error)[];
    try {
      outcomes = batch.map((item) => decision.decide(item.c, item.audit));
    } catch (err) {
      if (err === OLDER_BASELINE) return batch;
      for (const item of batch) item.reject(err);
      return [];
    }
    if (decision.writes.empty) {
      settle(batch, outcomes);
      return [];
    }
    const id = ++this.batches;
    for (const [account, after] of decision.decided) this.inFlight.set(account, { after, epoch, batch: id });
    const reply = await writer.submit(epoch, decision.writes.ops);
    for (const account of decision.decided.keys())
      if (this.inFlight.get(account)?.batch === id) this.inFlight.delete(account);
    switch (reply.kind) {
      case 'committed': {
        // As a commit on the event loop reports them: each account with the windows and balance it was left with.
        const changes: Change[] = [];
        for (const [account, after] of decision.decided) changes.push({ account, after });
        report(this.x.observer, changes);
        this.x.refusal = undefined;
        // What the thread committed is the checkpoint thread's to copy back (checkpointer.ts).
        this.x.checkpointer?.committed(0, performance.now());
        settle(batch, outcomes);
        return [];
      }
      case 'conflict':
        // Another process may have committed: learnt now, rather than at the next read.
        this.x.checkDataVersion();
        return batch;
      case 'failed': {
        const err = new StoreUnavailableError(`SQLite unavailable (${reply.code ?? reply.message})`);
        this.x.refusal = err;
        for (const item of batch) item.reject(err);
        return [];
      }
      case 'fatal': {
        const err = new StoreUnavailableError(
          `SQLite unavailable: could not make commits durable (fdatasync of the WAL: ${reply.message}); restart toolgate once the disk is sound`,
        );
        if (this.x.walSync) this.x.walSync.failure ??= err;
        for (const item of batch) item.reject(err);
        return [];
      }
    }
  }

  private reads(epoch: number): DecideReads {
    return {
      usage: (accountId) => {
        const ahead = this.inFlight.get(accountId);
        if (!ahead) return this.committed.usage(accountId);
        if (ahead.epoch !== epoch) throw OLDER_BASELINE;
        return ahead.after;
      },
      prior: (accountId, key) => this.committed.prior(accountId, key),
    };
  }
}

function settle(batch: readonly PendingUsage[], outcomes: readonly (UsageOutcome | Error)[]): void {
  batch.forEach((item, i) => {
    const outcome = outcomes[i]!;
    if (outcome instanceof Error) item.reject(outcome);
    else item.resolve(outcome);
  });
}
