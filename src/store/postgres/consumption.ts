/**
 * @module PostgreSQL's consumption, exact across servers in two round trips. The first opens the
 * transaction and, in one upsert, adds to every window of the consumption (each starts if it is not
 * running and takes the amount only if it fits: under READ COMMITTED, ON CONFLICT DO UPDATE locks
 * each row and evaluates its WHERE on the row's latest version, rows always in the same order),
 * reading the account's other windows beside it, and locks the account's balance when there is a
 * charge. The consumption is then decided here, from what those statements wrote and locked: the
 * charge, the webhook events it causes, the answer. The second writes the charge, the ledger entry,
 * the events, the idempotency record and the audit entry, and commits. Statements go together by
 * the simple query protocol, so their values are written into them as literals (quoted by the
 * driver). The other servers learn of it by a batched notification (notify-batch.ts).
 */
import type { AuditEntry } from '../../domain/audit.js';
import { exceededBy, type Increment, sameSlot, type WindowState } from '../../domain/fair-use.js';
import { newId } from '../../domain/ids.js';
import { ledgerDelta, replayOrConflict } from '../../domain/ledger.js';
import { balanceEvents, eventBody, thresholdEvents, type WebhookEvent } from '../../domain/webhooks.js';
import { Rollback } from '../rollback.js';
import {
  AUDIT_COLUMNS,
  auditValues,
  LEDGER_COLUMNS,
  ledgerValues,
  toWindow,
  type WindowRow,
} from '../rows.js';
import { chargeEntry, type UsageCommit, type UsageOutcome } from '../store.js';
import { type PgClient, type PgQueryable, quoteLiteral } from './driver.js';
import type { PgTransactions } from './transactions.js';

/** SQLSTATE foreign_key_violation: a window for an account that does not exist. */
const FOREIGN_KEY_VIOLATION = '23503';

type Row = Record<string, unknown>;

export function commitUsage(
  t: PgTransactions,
  c: UsageCommit,
  audit: AuditEntry | undefined,
): Promise<UsageOutcome> {
  return t.answer(() =>
    t.batched(async (client) => {
      const response = await consume(client, c, audit);
      return { result: { kind: 'committed', response } as UsageOutcome, changes: [{ account: c.accountId }] };
    }),
  );
}

async function consume(client: PgClient, c: UsageCommit, audit: AuditEntry | undefined): Promise<unknown> {
  const acc = sql(c.accountId);
  // Round trip 1: BEGIN, the idempotency key's lock and record, the windows, the balance.
  const first = ['BEGIN'];
  if (c.idempotency) {
    first.push(
      `SELECT pg_advisory_xact_lock(hashtextextended(${sql(`usage:${c.accountId}:${c.idempotency.key}`)}, 0))`,
      `SELECT request_hash, response FROM usage_idempotency WHERE account_id = ${acc} AND idempotency_key = ${sql(c.idempotency.key)}`,
    );
  }
  first.push(windowsUpsert(c));
  if (c.charge) first.push(`SELECT token_balance, low_balance FROM accounts WHERE id = ${acc} FOR UPDATE`);
  let results: { rows: Row[] }[];
  try {
    results = (await client.query(first.join(';\n'))) as unknown as { rows: Row[] }[];
  } catch (err) {
    if ((err as { code?: string }).code === FOREIGN_KEY_VIOLATION) throw new Rollback({ kind: 'not_found' });
    throw err;
  }
  let at = 1;
  if (c.idempotency) {
    const prior = results[at + 1]!.rows[0] as { request_hash: string; response: string } | undefined;
    at += 2;
    if (prior) {
      throw new Rollback(
        replayOrConflict(prior.request_hash, c.idempotency.requestHash, () => ({
          kind: 'replayed' as const,
          response: JSON.parse(prior.response),
        })),
      );
    }
  }
  const rows = results[at]!.rows as unknown as (WindowRow & { touched: boolean })[];
  const windows = rows.map(toWindow);
  const refused = c.increments.find((inc) => !rows.some((r, i) => r.touched && sameSlot(windows[i]!, inc)));
  if (refused) throw new Rollback(await refusal(client, c, refused));

  // Decided here, from what the transaction wrote and locked.
  const events: WebhookEvent[] = [];
  const stamp = () => ({ id: newId('msg', c.now * 1000), at: c.now });
  if (c.thresholds) {
    // The use before is what the upsert found in the row it locked (its run's, 0 if it started one).
    const usedBefore = (inc: Increment) => windows.find((w) => sameSlot(w, inc))!.used - inc.amount;
    events.push(...thresholdEvents(c.accountId, c.increments, usedBefore, windows, c.thresholds, stamp));
  }
  const second: string[] = [];
  let balanceAfter: number | null = null;
  if (c.charge) {
    const account = results[at + 1]!.rows[0] as {
      token_balance: string | number;
      low_balance: string | number | null;
    };
    if (!account) throw new Rollback({ kind: 'not_found' });
    const before = Number(account.token_balance);
    const delta = ledgerDelta('charge', c.charge.amount);
    balanceAfter = before + delta;
    if (balanceAfter < 0) throw new Rollback({ kind: 'insufficient', balance: before });
    const low = account.low_balance === null ? null : Number(account.low_balance);
    events.push(...balanceEvents(c.accountId, before, balanceAfter, low, stamp));
    second.push(
      `UPDATE accounts SET token_balance = token_balance + ${delta} WHERE id = ${acc}`,
      `INSERT INTO token_ledger (${LEDGER_COLUMNS}) VALUES (${row(ledgerValues(chargeEntry(c, c.charge), delta, balanceAfter))})`,
    );
  }
  const response = c.render(windows, balanceAfter);
  // Round trip 2: the writes decided, and COMMIT.
  if (events.length > 0) {
    second.push(
      `INSERT INTO webhook_events (id, type, account_id, body, created_at) VALUES ${events
        .map((e) => `(${row([e.id, e.type, e.accountId, eventBody(e), e.at])})`)
        .join(', ')}`,
    );
  }
  if (c.idempotency) {
    second.push(
      `INSERT INTO usage_idempotency (account_id, idempotency_key, request_hash, response, created_at) VALUES (${row(
        [
          c.accountId,
          c.idempotency.key,
          c.idempotency.requestHash,
          // Kept as text, not JSONB: a replay answers byte for byte what was answered first.
          JSON.stringify(response),
          c.now,
        ],
      )})`,
    );
  }
  if (audit) second.push(`INSERT INTO audit_log (${AUDIT_COLUMNS}) VALUES (${row(auditValues(audit))})`);
  second.push('COMMIT');
  await client.query(second.join(';\n'));
  return response;
}

/**
 * All of a consumption's windows in one conditional upsert, the account's other windows read beside
 * it: each row of the answer says whether this statement wrote it (`touched`).
 */
function windowsUpsert(c: UsageCommit): string {
  if (c.increments.length === 0)
    return `SELECT category, unit, win, started_at, ends_at, used, false AS touched FROM fair_use_windows WHERE account_id = ${sql(c.accountId)}`;
  const values = c.increments
    .map(
      (i) =>
        `(${sql(i.category)}, ${sql(i.unit)}, ${sql(i.window)}, ${int(i.lengthSeconds)}::bigint, ${int(i.amount)}::bigint, ${int(i.limit)}::bigint)`,
    )
    .join(', ');
  const acc = sql(c.accountId);
  const now = `${int(c.now)}::bigint`;
  return `WITH v (category, unit, win, len, amount, lim) AS (VALUES ${values}),
    up AS (
      INSERT INTO fair_use_windows AS w (account_id, category, unit, win, started_at, ends_at, used)
      SELECT ${acc}, category, unit, win, ${now}, ${now} + len, amount FROM v WHERE amount <= lim
      ON CONFLICT (account_id, category, unit, win) DO UPDATE SET
        used       = CASE WHEN w.ends_at <= ${now} THEN excluded.used ELSE w.used + excluded.used END,
        started_at = CASE WHEN w.ends_at <= ${now} THEN excluded.started_at ELSE w.started_at END,
        ends_at    = CASE WHEN w.ends_at <= ${now} THEN excluded.ends_at ELSE w.ends_at END
      WHERE (CASE WHEN w.ends_at <= ${now} THEN 0 ELSE w.used END) + excluded.used
        <= (SELECT lim FROM v WHERE v.category = excluded.category AND v.unit = excluded.unit AND v.win = excluded.win)
      RETURNING category, unit, win, started_at, ends_at, used
    )
    SELECT category, unit, win, started_at, ends_at, used, true AS touched FROM up
    UNION ALL
    SELECT category, unit, win, started_at, ends_at, used, false FROM fair_use_windows w
     WHERE w.account_id = ${acc}
       AND NOT EXISTS (SELECT 1 FROM up WHERE up.category = w.category AND up.unit = w.unit AND up.win = w.win)`;
}

/** Why a window refused: no such account, or the window and how much was left (read again, as it is now). */
async function refusal(db: PgQueryable, c: UsageCommit, refused: Increment): Promise<UsageOutcome> {
  // Nothing was inserted when every amount alone is over its limit: the account may not exist.
  const account = await db.query('SELECT 1 FROM accounts WHERE id = $1', [c.accountId]);
  if (account.rows.length === 0) return { kind: 'not_found' };
  // Read again: the refusal saw the row's latest version, the upsert's read an older one.
  const latest = (
    await db.query<WindowRow>(
      'SELECT category, unit, win, started_at, ends_at, used FROM fair_use_windows WHERE account_id = $1',
      [c.accountId],
    )
  ).rows.map(toWindow) as WindowState[];
  return { kind: 'exceeded', exceeded: exceededBy(refused, latest, c.now) };
}

/** A whole number for a statement: checked, so that nothing but digits is ever written in. */
function int(n: number): string {
  if (!Number.isSafeInteger(n)) throw new Error(`not a whole number: ${n}`);
  return String(n);
}

/** A value as an SQL literal: strings quoted by the driver's own escaping, whole numbers checked. */
function sql(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'number') return int(v);
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  if (typeof v === 'string') return quoteLiteral(v);
  return quoteLiteral(JSON.stringify(v));
}

const row = (values: readonly unknown[]) => values.map(sql).join(', ');
