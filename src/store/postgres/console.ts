/** @module PostgreSQL's console data: sign-in links, sessions, and an email's memberships (store.ts, ConsoleStore). */
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
import { guard } from './driver.js';
import type { PgTransactions } from './transactions.js';

export class PgConsole implements ConsoleStore {
  constructor(private readonly t: PgTransactions) {}

  async addLink(link: ConsoleLink, audit?: AuditEntry): Promise<void> {
    await this.t.tx(async (db) => {
      await db.query(
        `INSERT INTO console_links (token_hash, email, account_id, purpose, return_to, created_at, expires_at, used_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [
          link.tokenHash,
          link.email,
          link.accountId,
          link.purpose,
          link.returnTo,
          link.createdAt,
          link.expiresAt,
          link.usedAt,
        ],
      );
      await writeAudit(audit, db);
    });
  }

  async useLink(tokenHash: string, now: EpochSeconds): Promise<ConsoleLink | undefined> {
    // One statement: PostgreSQL re-checks used_at on the locked row, so of two at once one wins.
    const row = await guard(() =>
      this.t.one<LinkRow>(
        `UPDATE console_links SET used_at = $1
         WHERE token_hash = $2 AND used_at IS NULL AND expires_at > $1 RETURNING *`,
        [now, tokenHash],
      ),
    );
    return row && toLink(row);
  }

  async findLink(tokenHash: string, now: EpochSeconds): Promise<ConsoleLink | undefined> {
    const row = await guard(() =>
      this.t.one<LinkRow>(
        'SELECT * FROM console_links WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2',
        [tokenHash, now],
      ),
    );
    return row && toLink(row);
  }

  async addSession(s: ConsoleSessionRecord, audit?: AuditEntry): Promise<void> {
    await this.t.tx(async (db) => {
      await db.query(
        'INSERT INTO console_sessions (id, token_hash, email, created_at, last_seen_at) VALUES ($1, $2, $3, $4, $5)',
        [s.id, s.tokenHash, s.email, s.createdAt, s.lastSeenAt],
      );
      await writeAudit(audit, db);
    });
  }

  async getSession(tokenHash: string): Promise<ConsoleSessionRecord | undefined> {
    const row = await guard(() =>
      this.t.one<SessionRow>('SELECT * FROM console_sessions WHERE token_hash = $1', [tokenHash]),
    );
    return row && toSession(row);
  }

  async touchSession(id: string, at: EpochSeconds): Promise<void> {
    await guard(() =>
      this.t.pool.query('UPDATE console_sessions SET last_seen_at = $1 WHERE id = $2 AND last_seen_at < $1', [
        at,
        id,
      ]),
    );
  }

  endSession(id: string, audit?: AuditEntry): Promise<boolean> {
    return this.t.tx(async (db) => {
      const { rowCount } = await db.query('DELETE FROM console_sessions WHERE id = $1', [id]);
      if (rowCount === 1) await writeAudit(audit, db);
      return rowCount === 1;
    });
  }

  async endSessionsOf(email: string): Promise<number> {
    const res = await guard(() =>
      this.t.pool.query('DELETE FROM console_sessions WHERE email = $1', [email]),
    );
    return res.rowCount ?? 0;
  }

  async memberships(email: string): Promise<ConsoleMembership[]> {
    const rows = await guard(() => this.t.all<MembershipRow>(membershipsQuery('$1'), [email]));
    return rows.map(toMembership);
  }

  async prune(now: EpochSeconds, idleBefore: EpochSeconds, createdBefore: EpochSeconds): Promise<void> {
    await this.t.tx(async (db) => {
      await db.query('DELETE FROM console_links WHERE expires_at <= $1', [now]);
      await db.query('DELETE FROM console_sessions WHERE last_seen_at < $1 OR created_at < $2', [
        idleBefore,
        createdBefore,
      ]);
    });
  }
}
