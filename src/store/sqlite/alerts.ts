/** @module SQLite's customer alerts: each user's choice, and the leased alert mails (store.ts, AlertStore). */
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
import type { SqliteExecutor } from './executor.js';

/**
 * Inside the fan-out's transaction (so once per event, like its deliveries): a mail for each owner
 * of the event's account who wants them, for each event owners are mailed about.
 */
export function queueAlertMails(x: SqliteExecutor, events: readonly EventRow[], now: EpochSeconds): void {
  for (const e of alertEvents(events)) {
    const owners = x
      .sql("SELECT id FROM users WHERE account_id = ? AND role = 'owner' AND alert_mails = 1 ORDER BY id")
      .all(e.account_id) as { id: string }[];
    for (const owner of owners)
      x.sql(
        `INSERT INTO alert_mails (id, event_id, user_id, account_id, type, body, event_at, status, attempts,
           next_attempt_at, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?) ON CONFLICT (event_id, user_id) DO NOTHING`,
      ).run(
        newId('alm', now * 1000),
        e.id,
        owner.id,
        e.account_id,
        e.type,
        e.body,
        e.created_at,
        now,
        now,
        now,
      );
  }
}

export class SqliteAlerts implements AlertStore {
  constructor(private readonly x: SqliteExecutor) {}

  async mailsOn(userId: string): Promise<boolean | undefined> {
    const row = await this.x.attempt(
      () =>
        this.x.sql('SELECT alert_mails FROM users WHERE id = ?').get(userId) as
          | { alert_mails: number }
          | undefined,
    );
    return row && row.alert_mails === 1;
  }

  setMailsOn(userId: string, on: boolean, audit?: AuditEntry): Promise<boolean> {
    return this.x.writeTx(() => {
      const row = this.x.sql('SELECT alert_mails FROM users WHERE id = ?').get(userId) as
        | { alert_mails: number }
        | undefined;
      if (!row) return false;
      if (row.alert_mails === (on ? 1 : 0)) return true;
      this.x.sql('UPDATE users SET alert_mails = ? WHERE id = ?').run(on ? 1 : 0, userId);
      writeAudit(this.x, audit);
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
    // One writer at a time: the claiming UPDATE cannot hand a mail to two callers.
    return this.x.writeTx(() => {
      const ids = this.x
        .sql(
          `UPDATE alert_mails SET lease_token = ?, lease_until = ?
            WHERE id IN (SELECT id FROM alert_mails
                          WHERE status = 'pending' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until <= ?)
                          ORDER BY next_attempt_at, id LIMIT ?)
            RETURNING id`,
        )
        .all(leaseToken, leaseUntil, now, now, limit) as { id: string }[];
      const read = this.x.sql(`${DUE_ALERT_SELECT} WHERE m.id = ?`);
      const skip = this.x.sql(
        `UPDATE alert_mails SET status = 'skipped', lease_token = NULL, lease_until = NULL, next_attempt_at = NULL,
           updated_at = ? WHERE id = ?`,
      );
      const due: DueAlertMail[] = [];
      for (const { id } of ids) {
        const mail = toDueAlert(read.get(id) as DueAlertRow, staleBefore);
        if (mail) due.push(mail);
        else skip.run(now, id);
      }
      return due.sort((a, b) => (a.alert.id < b.alert.id ? -1 : 1));
    });
  }

  settle(id: string, leaseToken: string, result: AlertMailResult, now: EpochSeconds): Promise<boolean> {
    return this.x.writeTx(
      () =>
        this.x
          .sql(
            `UPDATE alert_mails SET status = ?, attempts = attempts + 1, next_attempt_at = ?, last_error = ?,
               lease_token = NULL, lease_until = NULL, updated_at = ?
             WHERE id = ? AND lease_token = ?`,
          )
          .run(result.status, result.nextAttemptAt, result.error, now, id, leaseToken).changes === 1,
    );
  }

  list(page: Page): Promise<AlertMailRecord[]> {
    return this.x.attempt(() =>
      (
        this.x
          .sql('SELECT * FROM alert_mails WHERE id > ? ORDER BY id LIMIT ?')
          .all(page.after ?? '', page.limit) as AlertMailRow[]
      ).map(toAlertMail),
    );
  }
}
