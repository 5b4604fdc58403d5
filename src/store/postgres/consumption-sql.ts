/**
 * @module The fixed statements of PostgreSQL's group commit (consumption.ts), named so that each
 * connection parses and plans them once: a batch's values go as typed arrays (`unnest`), however
 * many consumptions it holds, so the text never changes with the batch. A batch runs them with
 * `plan_cache_mode = force_generic_plan` (consumption.ts): a custom plan would be made again for
 * every batch, since the arrays' lengths are what a custom plan is made for.
 */
import { AUDIT_COLUMNS, LEDGER_COLUMNS } from '../rows.js';

/** A named statement with its values, as pg sends it: prepared once per connection. */
export interface NamedQuery {
  name: string;
  text: string;
  values: unknown[];
}

/**
 * The idempotency keys' advisory locks, taken one after the other in the array's order (the
 * caller sorts it: one order for every server).
 */
export const KEY_LOCKS = {
  name: 'tg_consume_key_locks',
  text: 'SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM unnest($1::text[]) AS k',
};

/** The records of the batch's idempotency keys: (account, key) pairs as two arrays. */
export const PRIORS = {
  name: 'tg_consume_priors',
  text: `SELECT i.account_id, i.idempotency_key, i.request_hash, i.response
    FROM usage_idempotency i JOIN unnest($1::text[], $2::text[]) AS v (a, k)
      ON i.account_id = v.a AND i.idempotency_key = v.k`,
};

/**
 * The batch's accounts locked and read: a row per (account, category) pair, a NULL category for
 * an account that consumes no window. Locking returns each row as last committed (after any wait
 * for another batch's COMMIT): the windows on it are the latest. The rows are locked in the sort's
 * order (the lock is taken above the sort), by account, the same for every server.
 */
export const LOCKED_READ = {
  name: 'tg_consume_locked_read',
  text: `SELECT a.id, v.c, a.token_balance, a.low_balance, a.fair_use -> v.c AS w
    FROM accounts a JOIN unnest($1::text[], $2::text[]) AS v (id, c) ON a.id = v.id
    ORDER BY a.id, v.c FOR NO KEY UPDATE OF a`,
};

/** The tables a batch writes, in the order writesOf takes them, each with its columns' types and how it inserts them. */
const WRITTEN = [
  {
    types: ['text', 'text', 'bigint'],
    // Each account's windows of the categories it read are merged in (`||` replaces those members
    // only). The rows are already locked by LOCKED_READ (this transaction's): nobody is waited on.
    sql: (u: string) => `UPDATE accounts SET fair_use = accounts.fair_use || v.f::jsonb, token_balance = v.b
      FROM ${u} AS v (id, f, b) WHERE accounts.id = v.id`,
  },
  {
    types: ['text', 'text', 'text', 'bigint', 'bigint', 'bigint', 'text', 'text', 'text', 'bigint'],
    sql: (u: string) => `INSERT INTO token_ledger (${LEDGER_COLUMNS}) SELECT * FROM ${u}`,
  },
  {
    types: ['text', 'text', 'text', 'text', 'bigint'],
    sql: (u: string) =>
      `INSERT INTO webhook_events (id, type, account_id, body, created_at) SELECT * FROM ${u}`,
  },
  {
    types: ['text', 'text', 'text', 'text', 'bigint'],
    sql: (
      u: string,
    ) => `INSERT INTO usage_idempotency (account_id, idempotency_key, request_hash, response, created_at)
      SELECT * FROM ${u}`,
  },
  {
    types: ['text', 'bigint', 'text', 'text', 'text', 'text', 'text'],
    sql: (u: string) => `INSERT INTO audit_log (${AUDIT_COLUMNS})
      SELECT i, a, ac, act, acc, t, d::jsonb FROM ${u} AS x (i, a, ac, act, acc, t, d)`,
  },
] as const;

/** How many columns each table of WRITTEN takes, in order (Columns of these widths). */
export const WRITTEN_WIDTHS = WRITTEN.map((t) => t.types.length);

const variants = new Map<number, { name: string; text: string }>();

/**
 * Everything a batch writes, in one statement: the tables it writes (`tables[i]` has rows for
 * WRITTEN[i]), each a data-modifying CTE, which runs once, to completion, whether or not anything
 * reads it. A table without rows is left out, so that a batch opens no table it does not write
 * (a variant per set of tables, a handful in practice, each named and prepared once).
 */
export function writesOf(tables: readonly Columns[]): NamedQuery | null {
  let mask = 0;
  tables.forEach((t, i) => {
    if (t.length > 0) mask |= 1 << i;
  });
  if (mask === 0) return null;
  let variant = variants.get(mask);
  if (!variant) {
    let n = 0;
    const parts: string[] = [];
    WRITTEN.forEach((t, i) => {
      if (!(mask & (1 << i))) return;
      const unnest = `unnest(${t.types.map((type) => `$${++n}::${type}[]`).join(', ')})`;
      parts.push(`w${i} AS (${t.sql(unnest)})`);
    });
    variant = { name: `tg_consume_writes_${mask}`, text: `WITH ${parts.join(', ')} SELECT 1` };
    variants.set(mask, variant);
  }
  return { ...variant, values: tables.filter((t) => t.length > 0).flatMap((t) => t.columns) };
}

/** Columns of a table's rows, one array per column (writesOf takes them so). */
export class Columns {
  readonly columns: unknown[][];

  constructor(width: number) {
    this.columns = Array.from({ length: width }, () => []);
  }

  get length(): number {
    return this.columns[0]!.length;
  }

  push(values: readonly unknown[]): void {
    if (values.length !== this.columns.length)
      throw new Error(`a row of ${values.length} values for ${this.columns.length} columns`);
    for (let i = 0; i < values.length; i++) this.columns[i]!.push(values[i]);
  }
}
