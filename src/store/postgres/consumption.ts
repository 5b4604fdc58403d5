/**
 * @module PostgreSQL's consumption: every window of a consumption in one conditional upsert, the
 * charge and the idempotency record in the same transaction, so that consumptions stay exact across
 * servers (PostgreSQL re-evaluates each condition on the locked row).
 */
import type { AuditEntry } from '../../domain/audit.js';
import { exceededBy, type Increment, sameSlot, type WindowState } from '../../domain/fair-use.js';
import { newId } from '../../domain/ids.js';
import { replayOrConflict } from '../../domain/ledger.js';
import { thresholdEvents } from '../../domain/webhooks.js';
import type { Change } from '../changes.js';
import { Rollback } from '../rollback.js';
import { toWindow, type WindowRow } from '../rows.js';
import { chargeEntry, type UsageCommit, type UsageOutcome } from '../store.js';
import { writeAudit } from './audit.js';
import type { PgQueryable } from './driver.js';
import { applyLedger } from './ledger.js';
import { lockIdempotencyKey, type PgTransactions } from './transactions.js';
import { recordEvents } from './webhooks.js';

/** SQLSTATE foreign_key_violation: a window for an account that does not exist. */
const FOREIGN_KEY_VIOLATION = '23503';

export async function commitUsage(
  t: PgTransactions,
  c: UsageCommit,
  audit: AuditEntry | undefined,
): Promise<UsageOutcome> {
  return t.answer(() =>
    t.tx(
      async (db) => {
        const outcome = await consume(t, c, db);
        if (outcome.kind === 'committed') await writeAudit(audit, db);
        return outcome;
      },
      (outcome): Change[] => (outcome.kind === 'committed' ? [{ account: c.accountId }] : []),
    ),
  );
}

/**
 * A consumption's windows in one statement, one round trip: one conditional upsert for all of
 * them (each starts if it is not running and is added to if the amount fits; under READ
 * COMMITTED, ON CONFLICT DO UPDATE locks each row and evaluates WHERE on its latest version, the
 * rows always in the same order), with the account's other windows read beside it. Answers the
 * account's windows after it; throws a Rollback when a window refused or the account is unknown
 * (the windows' foreign key).
 */
async function addToWindows(t: PgTransactions, c: UsageCommit, db: PgQueryable): Promise<WindowState[]> {
  const incs = c.increments;
  let rows: (WindowRow & { touched: boolean })[];
  try {
    rows = await t.all<WindowRow & { touched: boolean }>(
      {
        name: 'tg_add_to_windows',
        text: `WITH v AS (
          SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $6::bigint[], $7::bigint[], $8::bigint[])
            AS v (category, unit, win, len, amount, lim)
        ), up AS (
          INSERT INTO fair_use_windows AS w (account_id, category, unit, win, started_at, ends_at, used)
          SELECT $1, category, unit, win, $5::bigint, $5::bigint + len, amount FROM v WHERE amount <= lim
          ON CONFLICT (account_id, category, unit, win) DO UPDATE SET
            used       = CASE WHEN w.ends_at <= $5::bigint THEN excluded.used ELSE w.used + excluded.used END,
            started_at = CASE WHEN w.ends_at <= $5::bigint THEN excluded.started_at ELSE w.started_at END,
            ends_at    = CASE WHEN w.ends_at <= $5::bigint THEN excluded.ends_at ELSE w.ends_at END
          WHERE (CASE WHEN w.ends_at <= $5::bigint THEN 0 ELSE w.used END) + excluded.used
            <= (SELECT lim FROM v WHERE v.category = excluded.category AND v.unit = excluded.unit AND v.win = excluded.win)
          RETURNING category, unit, win, started_at, ends_at, used
        )
        SELECT category, unit, win, started_at, ends_at, used, true AS touched FROM up
        UNION ALL
        SELECT category, unit, win, started_at, ends_at, used, false FROM fair_use_windows w
         WHERE w.account_id = $1
           AND NOT EXISTS (SELECT 1 FROM up WHERE up.category = w.category AND up.unit = w.unit AND up.win = w.win)`,
      },
      [
        c.accountId,
        incs.map((i) => i.category),
        incs.map((i) => i.unit),
        incs.map((i) => i.window),
        c.now,
        incs.map((i) => i.lengthSeconds),
        incs.map((i) => i.amount),
        incs.map((i) => i.limit),
      ],
      db,
    );
  } catch (err) {
    if ((err as { code?: string }).code === FOREIGN_KEY_VIOLATION) throw new Rollback({ kind: 'not_found' });
    throw err;
  }
  const windows = rows.map(toWindow);
  const refused = incs.find((inc) => !rows.some((r, i) => r.touched && sameSlot(windows[i]!, inc)));
  if (refused) {
    // Nothing was inserted when every amount alone is over its limit: the account may not exist.
    if (!(await t.one('SELECT 1 FROM accounts WHERE id = $1', [c.accountId], db)))
      throw new Rollback({ kind: 'not_found' });
    // Read again: the refusal saw the row's latest version, this statement's read an older one.
    const latest = await windowsOf(t, c.accountId, db);
    throw new Rollback({ kind: 'exceeded', exceeded: exceededBy(refused, latest, c.now) });
  }
  return windows;
}

async function consume(t: PgTransactions, c: UsageCommit, db: PgQueryable): Promise<UsageOutcome> {
  if (c.idempotency) {
    await lockIdempotencyKey(db, 'usage', c.accountId, c.idempotency.key);
    // Kept as text, not JSONB: a replay answers byte for byte what was answered first.
    const prior = await t.one<{ request_hash: string; response: string }>(
      'SELECT request_hash, response FROM usage_idempotency WHERE account_id = $1 AND idempotency_key = $2',
      [c.accountId, c.idempotency.key],
      db,
    );
    if (prior) {
      return replayOrConflict(prior.request_hash, c.idempotency.requestHash, () => ({
        kind: 'replayed' as const,
        response: JSON.parse(prior.response),
      }));
    }
  }
  const windows = await addToWindows(t, c, db);
  if (c.thresholds) {
    // The use before is what the upsert found in the row it locked (its run's, 0 if it started one).
    const usedBefore = (inc: Increment) => windows.find((w) => sameSlot(w, inc))!.used - inc.amount;
    const stamp = () => ({ id: newId('msg', c.now * 1000), at: c.now });
    await recordEvents(
      thresholdEvents(c.accountId, c.increments, usedBefore, windows, c.thresholds, stamp),
      db,
    );
  }
  let balanceAfter: number | null = null;
  if (c.charge) {
    const outcome = await applyLedger(t, chargeEntry(c, c.charge), db);
    if (outcome.kind !== 'applied') throw new Rollback(outcome as UsageOutcome);
    balanceAfter = outcome.entry.balanceAfter;
  }
  const response = c.render(windows, balanceAfter);
  if (c.idempotency) {
    await db.query(
      `INSERT INTO usage_idempotency (account_id, idempotency_key, request_hash, response, created_at)
       VALUES ($1, $2, $3, $4, $5)`,
      [c.accountId, c.idempotency.key, c.idempotency.requestHash, JSON.stringify(response), c.now],
    );
  }
  return { kind: 'committed', response };
}

async function windowsOf(t: PgTransactions, accountId: string, db: PgQueryable): Promise<WindowState[]> {
  return (
    await t.all<WindowRow>(
      {
        name: 'tg_windows_of',
        text: 'SELECT category, unit, win, started_at, ends_at, used FROM fair_use_windows WHERE account_id = $1',
      },
      [accountId],
      db,
    )
  ).map(toWindow);
}
