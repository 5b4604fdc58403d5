/** @module PostgreSQL's customer alerts: each user's choice, and the leased alert mails (store.ts, AlertStore). */
import type { AuditEntry } from '../../domain/audit.js';
import type { EpochSeconds } from '../../domain/clock.js';
import { newId } from '../../domain/ids.js';
import {
  type AlertMailRow,
  alertEvents,
  DUE_ALERT_SELECT,
  type DueAlertRow,
  toAlertMail,
  toDueAlert,
} from '../alert-rows.js';
import type { AlertMailRecord, AlertMailResult, AlertStore, DueAlertMail } from '../alerts-store.js';
import type { Page } from '../page.js';
import type { EventRow } from '../webhook-rows.js';
import { writeAudit } from './audit.js';
import { guard, type PgQueryable } from './driver.js';
import type { PgTransactions } from './transactions.js';

/**
 * Inside the fan-out's transaction (so once per event, like its deliveries): a mail for each owner
 * of the event's account who wants them, for each event owners are mailed about; one read of the
 * owners and one insert for the whole batch.
 */
export async function queueAlertMails(
  db: PgQueryable,
  events: readonly EventRow[],
  now: EpochSeconds,
): Promise<void> {
  const alerts = alertEvents(events);
  if (alerts.length === 0) return;
  const { rows: owners } = await db.query<{ id: string; account_id: string }>(
    `SELECT id, account_id FROM users WHERE account_id = ANY($1::text[]) AND role = 'owner' AND alert_mails
      ORDER BY id`,
    [[...new Set(alerts.map((e) => e.account_id))]],
  );
  const mails = alerts.flatMap((e) =>
    owners.filter((o) => o.account_id === e.account_id).map((o) => ({ e, userId: o.id })),
  );
  if (mails.length === 0) return;
  await db.query(
    `INSERT INTO alert_mails (id, event_id, user_id, account_id, type, body, event_at, status, attempts,
       next_attempt_at, created_at, updated_at)
     SELECT id, event_id, user_id, account_id, type, body, event_at, 'pending', 0, $8, $8, $8
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[])
         AS v (id, event_id, user_id, account_id, type, body, event_at)
     ON CONFLICT (event_id, user_id) DO NOTHING`,
    [
      mails.map(() => newId('alm', now * 1000)),
      mails.map((m) => m.e.id),
      mails.map((m) => m.userId),
      mails.map((m) => m.e.account_id),
      mails.map((m) => m.e.type),
      mails.map((m) => m.e.body),
      mails.map((m) => Number(m.e.created_at)),
      now,
    ],
  );
}

export class PgAlerts implements AlertStore {
  constructor(private readonly t: PgTransactions) {}

  async mailsOn(userId: string): Promise<boolean | undefined> {
    const row = await guard(() =>
      this.t.one<{ alert_mails: boolean }>('SELECT alert_mails FROM users WHERE id = $1', [userId]),
    );
    return row?.alert_mails;
  }

  setMailsOn(userId: string, on: boolean, audit?: AuditEntry): Promise<boolean> {
    return this.t.tx(async (db) => {
      const row = await this.t.one<{ alert_mails: boolean }>(
        'SELECT alert_mails FROM users WHERE id = $1 FOR UPDATE',
        [userId],
        db,
      );
      if (!row) return false;
      if (row.alert_mails === on) return true;
      await db.query('UPDATE users SET alert_mails = $1 WHERE id = $2', [on, userId]);
      await writeAudit(audit, db);
      return true;
    });
  }

  claim(
    now: EpochSeconds,
    leaseToken: string,
    leaseUntil: EpochSeconds,
    limit: number,
    staleBefore: EpochSeconds,
  ): Promise<DueAlertMail[]> {
    return this.t.tx(async (db) => {
      // FOR UPDATE SKIP LOCKED: servers claiming at once each take different mails, without waiting.
      const rows = await this.t.all<DueAlertRow>(
        `WITH claimed AS (
           UPDATE alert_mails SET lease_token = $1, lease_until = $2
            WHERE id IN (SELECT id FROM alert_mails
                          WHERE status = 'pending' AND next_attempt_at <= $3 AND (lease_until IS NULL OR lease_until <= $3)
                          ORDER BY next_attempt_at, id LIMIT $4 FOR UPDATE SKIP LOCKED)
            RETURNING id
         )
         ${DUE_ALERT_SELECT} WHERE m.id IN (SELECT id FROM claimed) ORDER BY m.id`,
        [leaseToken, leaseUntil, now, limit],
        db,
      );
      const due: DueAlertMail[] = [];
      const skipped: string[] = [];
      for (const row of rows) {
        const mail = toDueAlert(row, staleBefore);
        if (mail) due.push(mail);
        else skipped.push(row.id);
      }
      if (skipped.length > 0)
        await db.query(
          `UPDATE alert_mails SET status = 'skipped', lease_token = NULL, lease_until = NULL, next_attempt_at = NULL,
             updated_at = $1 WHERE id = ANY($2::text[])`,
          [now, skipped],
        );
      return due;
    });
  }

  async settle(id: string, leaseToken: string, result: AlertMailResult, now: EpochSeconds): Promise<boolean> {
    const res = await guard(() =>
      this.t.all(
        `UPDATE alert_mails SET status = $1, attempts = attempts + 1, next_attempt_at = $2, last_error = $3,
           lease_token = NULL, lease_until = NULL, updated_at = $4
         WHERE id = $5 AND lease_token = $6 RETURNING id`,
        [result.status, result.nextAttemptAt, result.error, now, id, leaseToken],
      ),
    );
    return res.length === 1;
  }

  async list(page: Page): Promise<AlertMailRecord[]> {
    return (
      await guard(() =>
        this.t.all<AlertMailRow>('SELECT * FROM alert_mails WHERE id > $1 ORDER BY id LIMIT $2', [
          page.after ?? '',
          page.limit,
        ]),
      )
    ).map(toAlertMail);
  }
}
