/**
 * @module PostgreSQL's consumptions, in group commits: those that arrive together are decided in one
 * transaction of two round trips and one COMMIT (one WAL flush), however many they are, by named
 * statements whose values are arrays (consumption-sql.ts): parsed and planned once per connection.
 * The first round trip takes the idempotency keys' locks and records, then locks the row of every account of
 * the batch, in one order for every server (so two servers' batches wait for each other, never
 * deadlock), reading with the lock the balance and the windows of the categories the batch consumes
 * from (both on that row: a JSON member per category, migration 010; the others are neither read
 * nor written, so a consumption costs its category's windows, not all the account has);
 * the batch is then decided in memory (consumption-decide.ts); the second round trip writes what
 * was decided and commits. The account's row is the lock on everything of it that a consumption
 * writes: once held, what was read is the latest committed, and nobody else writes it until this
 * COMMIT. NO KEY: other transactions' foreign-key checks on the account (a key, a ledger entry) do
 * not wait. The other servers learn of it by a notification sent with the COMMIT (commit-notice.ts).
 */
import type { AuditEntry } from '../../domain/audit.js';
import { pushStoredWindows, type StoredWindow } from '../../domain/fair-use-order.js';
import type { Category } from '../../domain/plans.js';
import type { Change } from '../changes.js';
import type { UsageCommit, UsageOutcome, UsageStore } from '../usage-store.js';
import {
  type AccountValues,
  type BatchDecision,
  decideBatch,
  type Pending,
  type Priors,
  priorKey,
} from './consumption-decide.js';
import { KEY_LOCKS, LOCKED_READ, PRIORS } from './consumption-sql.js';
import type { PgClient } from './driver.js';
import { type PgTransactions, settled } from './transactions.js';

/** Most consumptions decided in one transaction. */
const MAX_BATCH = 200;

type Row = Record<string, unknown>;

/**
 * The batch's named statements (consumption-sql.ts) are planned generically: once per connection,
 * not again for each batch's arrays. A generic plan guesses ten rows out of an array; against a
 * small accounts table a sequential scan then looks cheaper than ten lookups by key, and would be
 * kept for every batch, however large the table grows: off, so each account is found by its key.
 */
const BEGIN = 'BEGIN; SET LOCAL plan_cache_mode = force_generic_plan; SET LOCAL enable_seqscan = off';

export class PgGroupCommit implements UsageStore {
  private pending: Pending[] = [];
  private running = false;

  constructor(private readonly t: PgTransactions) {}

  commit(c: UsageCommit, audit?: AuditEntry): Promise<UsageOutcome> {
    return new Promise<UsageOutcome>((resolve, reject) => {
      this.pending.push({ c, audit, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  /**
   * One batch at a time: those that arrive meanwhile make up the next, as large as the load makes
   * it. One connection while batches keep coming, back to the pool when none is waiting.
   */
  private async drain(): Promise<void> {
    this.running = true;
    const held = this.t.hold();
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0, MAX_BATCH);
        try {
          const { result, notified } = await this.t.batched(held, async (client) => {
            const { values, priors } = await lockedRead(client, batch, categoriesByAccount(batch));
            const decided = decideBatch(batch, values, priors);
            return { result: decided, writes: decided.writes, changes: changesOf(decided) };
          });
          // Answered once every server has applied the batch; the next batch commits meanwhile.
          void notified.then(() =>
            batch.forEach((p, i) => {
              const o = result.outcomes[i]!;
              if (o instanceof Error) p.reject(o);
              else p.resolve(o);
            }),
          );
        } catch (err) {
          for (const p of batch) p.reject(err);
        }
      }
    } finally {
      held.release();
      this.running = false;
    }
  }
}

/**
 * Each account consumed from, with the windows of the categories read and the balance it was left
 * with: exact (locked by the transaction, now committed), so this server's cache keeps the account
 * rather than reading it again, its other categories as it knows them.
 */
function changesOf(d: BatchDecision): Change[] {
  return [...d.after].map(([account, v]) => ({
    account,
    after: { windows: v.windows, tokenBalance: v.balance, only: v.categories },
  }));
}

/** The batch's accounts (in one order for every server) and the categories each consumes from. */
function categoriesByAccount(batch: readonly Pending[]): Map<string, Category[]> {
  const byAccount = new Map<string, Set<Category>>();
  for (const p of batch) {
    let categories = byAccount.get(p.c.accountId);
    if (!categories) {
      categories = new Set();
      byAccount.set(p.c.accountId, categories);
    }
    for (const inc of p.c.increments) categories.add(inc.category);
  }
  const sorted = new Map<string, Category[]>();
  for (const id of [...byAccount.keys()].sort()) sorted.set(id, [...byAccount.get(id)!].sort());
  return sorted;
}

/**
 * The first round trip: BEGIN, the idempotency keys' locks and records, the accounts locked and
 * read, sent together (the connection pipelines them: each waits for the one before on the server,
 * not for its answer here). Answers the accounts found and the keys recorded.
 */
async function lockedRead(
  client: PgClient,
  batch: readonly Pending[],
  accounts: ReadonlyMap<string, Category[]>,
): Promise<{ values: Map<string, AccountValues>; priors: Priors }> {
  // A pair per account and category; an account consuming no window (a charge alone) is locked too.
  const ids: string[] = [];
  const pairs: (string | null)[] = [];
  for (const [id, categories] of accounts) {
    if (categories.length === 0) {
      ids.push(id);
      pairs.push(null);
    }
    for (const category of categories) {
      ids.push(id);
      pairs.push(category);
    }
  }
  const keyed = batch.filter((p) => p.c.idempotency);
  const sent = client.together(() => {
    const sent: Promise<{ rows: Row[] }>[] = [client.query(BEGIN)];
    if (keyed.length > 0) {
      // The idempotency keys' locks, in one order for every server, then the records of those keys.
      const locks = [...new Set(keyed.map((p) => `usage:${p.c.accountId}:${p.c.idempotency!.key}`))].sort();
      sent.push(client.query({ ...KEY_LOCKS, values: [locks] }));
      sent.push(
        client.query({
          ...PRIORS,
          values: [keyed.map((p) => p.c.accountId), keyed.map((p) => p.c.idempotency!.key)],
        }),
      );
    }
    sent.push(client.query({ ...LOCKED_READ, values: [ids, pairs] }));
    return sent;
  });
  const results = await settled(sent);
  const priors: Priors = new Map();
  if (keyed.length > 0)
    for (const r of results[2]!.rows)
      priors.set(priorKey(r.account_id as string, r.idempotency_key as string), {
        request_hash: r.request_hash as string,
        response: r.response as string,
      });
  const read = new Map<string, Map<Category, StoredWindow[]>>();
  const values = new Map<string, AccountValues>();
  for (const r of results.at(-1)!.rows) {
    const id = r.id as string;
    if (!values.has(id))
      values.set(id, {
        windows: [],
        categories: accounts.get(id) ?? [],
        balance: Number(r.token_balance),
        lowBalance: r.low_balance === null ? null : Number(r.low_balance),
      });
    if (r.c === null) continue;
    let stored = read.get(id);
    if (!stored) {
      stored = new Map();
      read.set(id, stored);
    }
    stored.set(r.c as Category, (r.w as StoredWindow[] | null) ?? []);
  }
  // In key order: the categories as sorted here (the database's collation may sort otherwise).
  for (const [id, v] of values) {
    const stored = read.get(id);
    for (const category of v.categories) pushStoredWindows(v.windows, category, stored?.get(category) ?? []);
  }
  return { values, priors };
}
