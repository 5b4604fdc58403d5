/** @module SQLite's users of an account (store.users). */
import type { AuditEntry } from '../../domain/audit.js';
import type { User } from '../../domain/users.js';
import type { Change } from '../changes.js';
import { toUser, type UserRow } from '../rows.js';
import type { UserStore } from '../users-store.js';
import { writeAudit } from './audit.js';
import type { SqliteExecutor } from './executor.js';

export class SqliteUsers implements UserStore {
  constructor(private readonly x: SqliteExecutor) {}

  add(user: User, audit?: AuditEntry): Promise<'added' | 'duplicate'> {
    return this.x.writeTx(
      () => {
        const { changes } = this.x
          .sql(
            `INSERT INTO users (id, account_id, email, role, created_at) VALUES (?, ?, ?, ?, ?)
             ON CONFLICT (account_id, email) DO NOTHING`,
          )
          .run(user.id, user.accountId, user.email, user.role, user.createdAt);
        if (changes !== 1) return 'duplicate' as const;
        writeAudit(this.x, audit);
        return 'added' as const;
      },
      () => [{ account: user.accountId }],
    );
  }

  async get(id: string): Promise<User | undefined> {
    const row = await this.x.attempt(
      () => this.x.sql('SELECT * FROM users WHERE id = ?').get(id) as UserRow | undefined,
    );
    return row && toUser(row);
  }

  async list(accountId: string): Promise<User[]> {
    return this.x.attempt(() =>
      (this.x.sql('SELECT * FROM users WHERE account_id = ? ORDER BY id').all(accountId) as UserRow[]).map(
        toUser,
      ),
    );
  }

  async remove(id: string, audit?: AuditEntry): Promise<User | undefined> {
    const row = await this.x.writeTx(
      () => {
        const removed = this.x.sql('DELETE FROM users WHERE id = ? RETURNING *').get(id) as
          | UserRow
          | undefined;
        if (removed) writeAudit(this.x, audit);
        return removed;
      },
      (removed): Change[] => (removed ? [{ account: removed.account_id }] : []),
    );
    return row && toUser(row);
  }
}
