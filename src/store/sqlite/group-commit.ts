/**
 * @module SQLite's group commit of consumptions: those that arrive together are decided one by one
 * and committed in one transaction, so they share one fdatasync; each is still all-or-nothing by
 * itself. A batch that charges goes to the writer thread when a serving process has one
 * (threaded-commit.ts); the others are decided here under the write lock, on the windows and
 * balances the observer knows (exact once the data_version check has reported other processes'
 * commits), else read, and committed on the event loop.
 */
import type { AuditEntry } from '../../domain/audit.js';
import { StoreUnavailableError } from '../../domain/errors.js';
import type { AccountUsage, Change } from '../changes.js';
import type { UsageCommit, UsageOutcome, UsageStore } from '../usage-store.js';
import { BatchDecision, type DecideReads, type Prior } from './consumption-decide.js';
import {
  CONSUMPTION_SQL,
  type PreparedWrite,
  prepareConsumptionWrites,
  runConsumptionWrites,
} from './consumption-writes.js';
import type { SqliteExecutor } from './executor.js';
import type { FairUseSql } from './fair-use-sql.js';
import { type PendingUsage, ThreadedCommit } from './threaded-commit.js';
import type { SqliteWriter } from './writer.js';

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
  private statements: PreparedWrite[] | undefined;
  private readonly reads: DecideReads = {
    usage: (accountId) => this.usageBefore(accountId),
    prior: (accountId, key) => this.prior(accountId, key),
  };
  private readonly threaded: ThreadedCommit;
  /**
   * Consumptions to commit on the event loop, under the lock, once no batch is under way in the
   * writer thread: those it does not take, and those it did not write.
   */
  private readonly onLoop: PendingUsage[] = [];
  /** A batch on the event loop between its start and its commit (its lock may be waited for). */
  private committingOnLoop = false;

  constructor(
    private readonly x: SqliteExecutor,
    private readonly windows: FairUseSql,
  ) {
    this.threaded = new ThreadedCommit(x, this.reads);
    // The group commit's transaction: each consumption of the batch all-or-nothing by itself.
    this.consumeBatchTx = x.db.transaction((batch: PendingUsage[]) => {
      // Under the write lock from here to COMMIT: once other processes' commits are reported, what
      // the observer knows of windows and balances is the database's, and nothing else can change it.
      x.checkDataVersion();
      const decision = new BatchDecision(this.reads);
      const outcomes = batch.map((item) => decision.decide(item.c, item.audit));
      // Everything that could refuse a consumption was decided before these writes: should one fail
      // anyway, the whole batch fails rather than keep half a consumption.
      try {
        // Prepared at the first batch: the store is made before its migrations run.
        this.statements ??= prepareConsumptionWrites(x.db, CONSUMPTION_SQL);
        runConsumptionWrites(this.statements, decision.writes.ops);
      } catch (err) {
        throw new StoreUnavailableError(
          `a consumption's write failed, so its batch is not committed: ${(err as Error).message}`,
          { cause: err },
        );
      }
      return { outcomes, decided: decision.decided };
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
        // The writer thread batches what comes while it writes: sent at the end of this turn.
        const writer = this.x.writer;
        if (writer?.ready && (c.charge || writer.inFlight > 0)) setImmediate(this.flushHeldUsage);
        else if (this.x.walSync?.busy) this.x.walSync.beforeNext(this.flushHeldUsage);
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
    // The thread starts at the first batch that charges (a server that only meters never needs one,
    // nor its memory); that batch waits for it rather than be committed here.
    const writer = batch.some((item) => item.c.charge) ? this.x.startWriter() : this.x.writer;
    if (writer && !writer.ready) await writer.started;
    if (writer?.ready && this.forThread(writer, batch)) {
      const again = await this.threaded.commit(writer, batch);
      this.onLoop.push(...again);
    } else this.onLoop.push(...batch);
    await this.commitOnLoop();
  }

  /**
   * Whether the writer thread takes `batch`: one that charges (a charge writes a ledger entry and a
   * balance beside the windows, five times a metered consumption's writes), or any while batches are
   * under way there; never one with an idempotency key (decided under the lock, on the event loop),
   * nor while consumptions wait to be committed on the event loop (the two never have batches
   * decided at once: each decides on what the other has committed). A batch that only meters costs
   * the event loop less committed here than handed over.
   */
  private forThread(writer: SqliteWriter, batch: readonly PendingUsage[]): boolean {
    if (this.onLoop.length > 0 || this.committingOnLoop) return false;
    let charges = writer.inFlight > 0;
    for (const item of batch) {
      if (item.c.idempotency) return false;
      if (item.c.charge) charges = true;
    }
    return charges;
  }

  /** The consumptions waiting to be committed on the event loop, once the writer thread has none under way. */
  private async commitOnLoop(): Promise<void> {
    const waits: Promise<void>[] = [];
    while (this.onLoop.length > 0 && !this.committingOnLoop && !this.x.writer?.inFlight)
      waits.push(this.commitBatch(this.onLoop.splice(0, MAX_USAGE_BATCH)));
    await Promise.all(waits);
  }

  /**
   * A batch decided and committed on the event loop, under the write lock. From its start to its
   * commit (while its lock may be waited for) the writer thread takes no batch.
   */
  private async commitBatch(batch: PendingUsage[]): Promise<void> {
    this.committingOnLoop = true;
    try {
      const { outcomes } = await this.x.write(
        () => this.consumeBatchTx.immediate(batch),
        // Committed in this synchronous step, under the write lock: each account consumed is reported
        // with the windows and balance it was left with. Refused ones changed nothing; a failed batch
        // reports every account it held.
        (result): Change[] => {
          this.committingOnLoop = false;
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
    } finally {
      this.committingOnLoop = false;
    }
  }

  /**
   * An account's windows, balance and alert level as they stand before the batch: as cached (exact
   * under the write lock once the data version was checked: every commit of this process updates or
   * forgets what it touched), else read. Undefined: no such account.
   */
  private usageBefore(accountId: string): AccountUsage | undefined {
    const known = this.x.observer?.usage(accountId);
    if (known) return known;
    const account = this.x
      .sql('SELECT token_balance, low_balance FROM accounts WHERE id = ?')
      .get(accountId) as { token_balance: number; low_balance: number | null } | undefined;
    return (
      account && {
        windows: this.windows.windowsOf(accountId),
        tokenBalance: account.token_balance,
        lowBalance: account.low_balance,
      }
    );
  }

  private prior(accountId: string, key: string): Prior | undefined {
    return this.x
      .sql(
        'SELECT request_hash, response FROM usage_idempotency WHERE account_id = ? AND idempotency_key = ?',
      )
      .get(accountId, key) as Prior | undefined;
  }
}
