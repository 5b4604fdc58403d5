/** @module SQLite's console data: sign-in links, sessions, and an email's memberships (store.ts, ConsoleStore). */
import type { AuditEntry } from '../../domain/audit.js';
import type { EpochSeconds } from '../../domain/clock.js';
import {
  type LinkRow,
  type MembershipRow,
  membershipsQuery,
  type SessionRow,
  toLink,
  toMembership,
  toSession,
} from '../console-rows.js';
import type { ConsoleLink, ConsoleMembership, ConsoleSessionRecord, ConsoleStore } from '../store.js';
import { writeAudit } from './audit.js';
import type { SqliteExecutor } from './executor.js';

export class SqliteConsole implements ConsoleStore {
  constructor(private readonly x: SqliteExecutor) {}

  addLink(link: ConsoleLink, audit?: AuditEntry): Promise<void> {
    return this.x.writeTx(() => {
      this.x
        .sql(
          `INSERT INTO console_links (token_hash, email, account_id, purpose, return_to, created_at, expires_at, used_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          link.tokenHash,
          link.email,
          link.accountId,
          link.purpose,
          link.returnTo,
          link.createdAt,
          link.expiresAt,
          link.usedAt,
        );
      writeAudit(this.x, audit);
    });
  }

  async useLink(tokenHash: string, now: EpochSeconds): Promise<ConsoleLink | undefined> {
    const row = await this.x.write(
      () =>
        this.x
          .sql(
            `UPDATE console_links SET used_at = ?
             WHERE token_hash = ? AND used_at IS NULL AND expires_at > ? RETURNING *`,
          )
          .get(now, tokenHash, now) as LinkRow | undefined,
    );
    return row && toLink(row);
  }

  async findLink(tokenHash: string, now: EpochSeconds): Promise<ConsoleLink | undefined> {
    const row = this.x
      .sql('SELECT * FROM console_links WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?')
      .get(tokenHash, now) as LinkRow | undefined;
    return row && toLink(row);
  }

  addSession(s: ConsoleSessionRecord, audit?: AuditEntry): Promise<void> {
    return this.x.writeTx(() => {
      this.x
        .sql(
          'INSERT INTO console_sessions (id, token_hash, email, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?)',
        )
        .run(s.id, s.tokenHash, s.email, s.createdAt, s.lastSeenAt);
      writeAudit(this.x, audit);
    });
  }

  async getSession(tokenHash: string): Promise<ConsoleSessionRecord | undefined> {
    const row = await this.x.attempt(
      () =>
        this.x.sql('SELECT * FROM console_sessions WHERE token_hash = ?').get(tokenHash) as
          | SessionRow
          | undefined,
    );
    return row && toSession(row);
  }

  async touchSession(id: string, at: EpochSeconds): Promise<void> {
    await this.x.write(() =>
      this.x
        .sql('UPDATE console_sessions SET last_seen_at = ? WHERE id = ? AND last_seen_at < ?')
        .run(at, id, at),
    );
  }

  endSession(id: string, audit?: AuditEntry): Promise<boolean> {
    return this.x.writeTx(() => {
      const { changes } = this.x.sql('DELETE FROM console_sessions WHERE id = ?').run(id);
      if (changes === 1) writeAudit(this.x, audit);
      return changes === 1;
    });
  }

  endSessionsOf(email: string): Promise<number> {
    return this.x.write(() => this.x.sql('DELETE FROM console_sessions WHERE email = ?').run(email).changes);
  }

  async memberships(email: string): Promise<ConsoleMembership[]> {
    const rows = await this.x.attempt(() => this.x.sql(membershipsQuery('?')).all(email) as MembershipRow[]);
    return rows.map(toMembership);
  }

  async prune(now: EpochSeconds, idleBefore: EpochSeconds, createdBefore: EpochSeconds): Promise<void> {
    await this.x.writeTx(() => {
      this.x.sql('DELETE FROM console_links WHERE expires_at <= ?').run(now);
      this.x
        .sql('DELETE FROM console_sessions WHERE last_seen_at < ? OR created_at < ?')
        .run(idleBefore, createdBefore);
    });
  }
}
