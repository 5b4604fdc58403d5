/** @module PostgreSQL's users of an account (store.users). */
import type { AuditEntry } from '../../domain/audit.js';
import type { User } from '../../domain/users.js';
import type { Change } from '../changes.js';
import { toUser, type UserRow } from '../rows.js';
import type { UserStore } from '../users-store.js';
import { writeAudit } from './audit.js';
import { guard } from './driver.js';
import type { PgTransactions } from './transactions.js';

export class PgUsers implements UserStore {
  constructor(private readonly t: PgTransactions) {}

  async add(user: User, audit?: AuditEntry): Promise<'added' | 'duplicate'> {
    return this.t.tx(
      async (db) => {
        const { rowCount } = await db.query(
          `INSERT INTO users (id, account_id, email, role, created_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (account_id, email) DO NOTHING`,
          [user.id, user.accountId, user.email, user.role, user.createdAt],
        );
        if (rowCount !== 1) return 'duplicate';
        await writeAudit(audit, db);
        return 'added';
      },
      (outcome): Change[] => (outcome === 'added' ? [{ account: user.accountId }] : []),
    );
  }

  async get(id: string): Promise<User | undefined> {
    const row = await guard(() => this.t.one<UserRow>('SELECT * FROM users WHERE id = $1', [id]));
    return row && toUser(row);
  }

  async list(accountId: string): Promise<User[]> {
    return guard(async () =>
      (await this.t.all<UserRow>('SELECT * FROM users WHERE account_id = $1 ORDER BY id', [accountId])).map(
        toUser,
      ),
    );
  }

  async remove(id: string, audit?: AuditEntry): Promise<User | undefined> {
    const row = await this.t.tx(
      async (db) => {
        const removed = await this.t.one<UserRow>('DELETE FROM users WHERE id = $1 RETURNING *', [id], db);
        if (removed) await writeAudit(audit, db);
        return removed;
      },
      (removed): Change[] => (removed ? [{ account: removed.account_id }] : []),
    );
    return row && toUser(row);
  }
}
