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
  name: 'toolgate_consume_key_locks',
  text: 'SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM unnest($1::text[]) AS k',
};

/** The records of the batch's idempotency keys: (account, key) pairs as two arrays. */
export const PRIORS = {
  name: 'toolgate_consume_priors',
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
  name: 'toolgate_consume_locked_read',
  text: `SELECT a.id, v.c, a.token_balance, a.low_balance, a.fair_use -> v.c AS w
    FROM accounts a JOIN unnest($1::text[], $2::text[]) AS v (id, c) ON a.id = v.id
    ORDER BY a.id, v.c FOR NO KEY UPDATE OF a`,
};

/**
 * Everything a batch writes, in one statement: each data-modifying CTE runs once, to completion,
 * whether or not anything reads it, and one with empty arrays writes nothing. The accounts' rows
 * are already locked by LOCKED_READ (this transaction's), so the UPDATE waits on nobody. Each
 * account's windows of the categories it read are merged in (`||` replaces those members only).
 */
export const WRITES = {
  name: 'toolgate_consume_writes',
  text: `WITH acc AS (
      UPDATE accounts SET fair_use = accounts.fair_use || v.f::jsonb, token_balance = v.b
      FROM unnest($1::text[], $2::text[], $3::bigint[]) AS v (id, f, b) WHERE accounts.id = v.id
    ), led AS (
      INSERT INTO token_ledger (${LEDGER_COLUMNS})
      SELECT * FROM unnest($4::text[], $5::text[], $6::text[], $7::bigint[], $8::bigint[],
        $9::bigint[], $10::text[], $11::text[], $12::text[], $13::bigint[])
    ), ev AS (
      INSERT INTO webhook_events (id, type, account_id, body, created_at)
      SELECT * FROM unnest($14::text[], $15::text[], $16::text[], $17::text[], $18::bigint[])
    ), idem AS (
      INSERT INTO usage_idempotency (account_id, idempotency_key, request_hash, response, created_at)
      SELECT * FROM unnest($19::text[], $20::text[], $21::text[], $22::text[], $23::bigint[])
    ), aud AS (
      INSERT INTO audit_log (${AUDIT_COLUMNS})
      SELECT i, a, ac, act, acc, t, d::jsonb
      FROM unnest($24::text[], $25::bigint[], $26::text[], $27::text[], $28::text[], $29::text[],
        $30::text[]) AS x (i, a, ac, act, acc, t, d)
    ) SELECT 1`,
};

/** Columns of a table's rows, one array per column (WRITES takes them so). */
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
