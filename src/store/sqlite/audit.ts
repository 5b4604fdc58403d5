/** @module SQLite's audit trail: an entry written in the transaction of its action, and read a page at a time. */
import type { AuditEntry } from '../../domain/audit.js';
import type { AuditQuery, AuditStore } from '../audit-store.js';
import { AUDIT_COLUMNS, type AuditRow, auditValues, toAudit } from '../rows.js';
import type { SqliteExecutor } from './executor.js';

/** Inside the transaction of the action it describes; nothing without an entry. */
export function writeAudit(x: SqliteExecutor, audit: AuditEntry | undefined): void {
  if (!audit) return;
  x.sql(`INSERT INTO audit_log (${AUDIT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`).run(...auditValues(audit));
}

/** store.audit on SQLite. */
export class SqliteAudit implements AuditStore {
  constructor(private readonly x: SqliteExecutor) {}

  async list(q: AuditQuery): Promise<AuditEntry[]> {
    const x = this.x;
    const rows = await x.attempt(
      () =>
        (q.accountId === undefined
          ? x.sql('SELECT * FROM audit_log WHERE id > ? ORDER BY id LIMIT ?').all(q.after ?? '', q.limit)
          : x
              .sql('SELECT * FROM audit_log WHERE account_id = ? AND id > ? ORDER BY id LIMIT ?')
              .all(q.accountId, q.after ?? '', q.limit)) as AuditRow[],
    );
    return rows.map(toAudit);
  }
}
