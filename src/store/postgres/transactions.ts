/**
 * @module PostgreSQL's transactions: BEGIN … COMMIT on a pooled connection, each write's changes
 * reported to the observer right after its commit (changes.ts) and notified to the other servers
 * with the COMMIT in one round trip, and the wait until every server with a cache has applied them
 * (change-feed.ts).
 */
import { StoreUnavailableError } from '../../domain/errors.js';
import type { Change, ChangeObserver } from '../changes.js';
import { report } from '../changes.js';
import { Rollback } from '../rollback.js';
import type { LedgerOutcome, UsageOutcome } from '../store.js';
import type { ChangeFeed, Ticket } from './change-feed.js';
import { type CommitNotice, commitNotice } from './commit-notice.js';
import type { NamedQuery } from './consumption-sql.js';
import {
  guard,
  isUnavailable,
  type PgClient,
  type PgPool,
  type PgQueryable,
  quoteLiteral,
} from './driver.js';
import { HeldConnection } from './held.js';

export class PgTransactions {
  /**
   * Why the last transaction that ended could not be written, when the database refused it as
   * unavailable (cut off, disk full, too slow); cleared by the next one that commits. Readiness.
   */
  refusal: Error | undefined;

  constructor(
    readonly pool: PgPool,
    private readonly feed: ChangeFeed,
    private readonly observer: ChangeObserver | undefined,
    private readonly warn?: (message: string, fields: Record<string, unknown>) => void,
  ) {}

  /** A connection to keep across consecutive transactions (held.ts). */
  hold(): HeldConnection {
    return new HeldConnection(this.pool);
  }

  /**
   * A transaction in as few round trips as it can (the consumptions'), on `held`'s connection: `fn`
   * takes the first (BEGIN with its reads) and answers its result, the statements that write it
   * and what they change; those go in the second, pipelined with the COMMIT and the notification
   * of the change (commit-notice.ts). Should a write fail, the COMMIT behind it only ends the
   * failed transaction (PostgreSQL answers it with a ROLLBACK). Rolled back on any throw (the connection let
   * go if it is broken). Resolves at the commit, with `notified`: resolved once every server with a
   * cache has applied the changes.
   */
  async batched<T>(
    held: HeldConnection,
    fn: (client: PgClient) => Promise<{ result: T; writes: NamedQuery[]; changes: Change[] }>,
  ): Promise<{ result: T; notified: Promise<void> }> {
    let notice: CommitNotice | undefined;
    const { result, changes } = await this.noted(async () => {
      const client = await held.get();
      try {
        const decided = await fn(client);
        notice = decided.changes.length > 0 ? commitNotice(this.feed, decided.changes) : undefined;
        const { writes, commit } = client.together(() => ({
          writes: decided.writes.map((w) => client.query(w)),
          commit: client.query(['COMMIT', ...(notice?.statements ?? [])].join(';\n')),
        }));
        // A write's failure first: then the COMMIT (answered, or failing with the connection) rolled back.
        const wrote = await settled(writes).catch((err: unknown) => err as Error);
        if (wrote instanceof Error) {
          await commit.catch(() => {});
          throw wrote;
        }
        try {
          await commit;
        } catch (err) {
          // Out of any transaction block, the COMMIT went through and only the notification failed. (A
          // COMMIT here fails only with its connection: no constraint is deferred, nothing serialisable.)
          if (!notice || !(await outsideTransaction(client))) throw err;
          notice.ticket.cancel();
          notice = undefined;
          // Servers that miss it stop trusting their caches once their heartbeats fail too.
          this.warn?.('could not notify the other servers of committed consumptions', {
            err: (err as Error).message,
          });
        }
        return decided;
      } catch (err) {
        notice?.ticket.cancel();
        const broken = await rollBack(client, err);
        if (broken) held.release(broken);
        throw err;
      }
    });
    report(this.observer, changes);
    // Not waited for here: the caller answers once it resolves, and meanwhile commits the next batch.
    return { result, notified: notice ? notice.ticket.settle() : Promise.resolve() };
  }

  /** The first row of all(), or undefined. */
  async one<R>(
    text: string | { name: string; text: string },
    values: unknown[] = [],
    db: PgQueryable = this.pool,
  ): Promise<R | undefined> {
    return (await this.all<R>(text, values, db))[0];
  }

  /** `text` may be named, `{ name, text }`: prepared once per connection, for the hot statements. */
  async all<R>(
    text: string | { name: string; text: string },
    values: unknown[] = [],
    db: PgQueryable = this.pool,
  ): Promise<R[]> {
    return (
      typeof text === 'string' ? await db.query<R>(text, values) : await db.query<R>({ ...text, values })
    ).rows;
  }

  /**
   * BEGIN … COMMIT on one pooled connection; ROLLBACK on any throw (a Rollback is an answer, not an
   * error). `changes` names what the write touched: this server's cache forgets it right after the
   * commit, and the others are notified in the same transaction; the write returns once every live
   * server has applied it, so the next request anywhere sees it.
   */
  async tx<T>(fn: (db: PgClient) => Promise<T>, changes?: (result: T) => Change[]): Promise<T> {
    let touched: Change[] = [];
    let ticket: Ticket | undefined;
    let result: T;
    try {
      result = await this.txRun(fn, (result) => {
        touched = changes?.(result) ?? [];
        if (touched.length === 0) return undefined;
        ticket = this.feed.ticket(touched);
        return `SELECT pg_notify(${quoteLiteral(this.feed.channel)}, ${quoteLiteral(ticket.payload)})`;
      });
    } catch (err) {
      ticket?.cancel();
      throw err;
    } finally {
      report(this.observer, touched);
    }
    await ticket?.settle();
    return result;
  }

  /**
   * `lastly`, if it gives a statement, is sent with the COMMIT in one round trip (the simple query
   * protocol takes several statements, without parameters); should it fail, the COMMIT is not run
   * and the transaction rolls back like on any other error.
   */
  private async txRun<T>(
    fn: (db: PgClient) => Promise<T>,
    lastly?: (result: T) => string | undefined,
  ): Promise<T> {
    return this.noted(async () => {
      const client = await this.pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const result = await fn(client);
        const last = lastly?.(result);
        await client.query(last === undefined ? 'COMMIT' : `${last}; COMMIT`);
        return result;
      } catch (err) {
        broken = await rollBack(client, err);
        throw err;
      } finally {
        // A connection that failed to roll back is not given to anyone else.
        client.release(broken ?? false);
      }
    });
  }

  /** guard(fn), keeping `refusal` up to date with how it ended. */
  private async noted<T>(fn: () => Promise<T>): Promise<T> {
    try {
      const result = await guard(fn);
      this.refusal = undefined;
      return result;
    } catch (err) {
      if (err instanceof StoreUnavailableError) this.refusal = err;
      throw err;
    }
  }

  async answer<T extends UsageOutcome | LedgerOutcome>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof Rollback) return err.outcome as T;
      throw err;
    }
  }
}

/**
 * The answers of queries sent together (pipelined), in their order; rejects with the first that
 * failed, once every one has settled (none left unheard).
 */
export async function settled<R>(sent: readonly Promise<R>[]): Promise<R[]> {
  const all = await Promise.allSettled(sent);
  const failed = all.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  return all.map((r) => (r as PromiseFulfilledResult<R>).value);
}

/** Whether the connection is outside any transaction block: a statement runs (in a failed block it is refused). */
async function outsideTransaction(client: PgClient): Promise<boolean> {
  try {
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  }
}

/** Serialises every transaction that uses the same (account, idempotency key). */
export async function lockIdempotencyKey(
  db: PgQueryable,
  scope: string,
  accountId: string,
  key: string,
): Promise<void> {
  await db.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`${scope}:${accountId}:${key}`]);
}

/**
 * After `err` in a transaction: rolled back, unless the connection is gone or stalled (the server
 * rolls back when it drops; no waiting on it twice). Answers the error that makes the connection
 * unfit to be given to anyone else, if any.
 */
async function rollBack(client: PgClient, err: unknown): Promise<Error | undefined> {
  if (isUnavailable(err)) return err as Error;
  try {
    await client.query('ROLLBACK');
    return undefined;
  } catch (rollbackErr) {
    return rollbackErr as Error;
  }
}
