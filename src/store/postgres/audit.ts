/** @module PostgreSQL's audit trail: an entry written in the transaction of its action, and read a page at a time. */
import type { AuditEntry } from '../../domain/audit.js';
import type { AuditQuery, AuditStore } from '../audit-store.js';
import { AUDIT_COLUMNS, type AuditRow, auditValues, toAudit } from '../rows.js';
import { guard, type PgQueryable } from './driver.js';
import type { PgTransactions } from './transactions.js';

/** Inside the transaction of the action it describes; nothing without an entry. */
export async function writeAudit(audit: AuditEntry | undefined, db: PgQueryable): Promise<void> {
  if (!audit) return;
  await db.query(
    `INSERT INTO audit_log (${AUDIT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    auditValues(audit),
  );
}

/** store.audit on PostgreSQL. */
export class PgAudit implements AuditStore {
  constructor(private readonly t: PgTransactions) {}

  async list(q: AuditQuery): Promise<AuditEntry[]> {
    const t = this.t;
    const rows = await guard(() =>
      q.accountId === undefined
        ? t.all<AuditRow>('SELECT * FROM audit_log WHERE id > $1 ORDER BY id LIMIT $2', [
            q.after ?? '',
            q.limit,
          ])
        : t.all<AuditRow>('SELECT * FROM audit_log WHERE account_id = $1 AND id > $2 ORDER BY id LIMIT $3', [
            q.accountId,
            q.after ?? '',
            q.limit,
          ]),
    );
    return rows.map(toAudit);
  }
}
