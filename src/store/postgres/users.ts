/** @module PostgreSQL's users of an account (store.users). */
import { GRANT_HINT } from '../../domain/api-keys.js';
import type { AuditEntry } from '../../domain/audit.js';
import type { User, UserRole } from '../../domain/users.js';
import { changeEvent } from '../../domain/webhooks.js';
import type { Change } from '../changes.js';
import { toUser, type UserRow } from '../rows.js';
import type { GuardRefusal, MemberGuard, UserRemoval, UserStore } from '../users-store.js';
import { writeAudit } from './audit.js';
import { guard as guarded, type PgClient } from './driver.js';
import type { PgTransactions } from './transactions.js';
import { recordEvents } from './webhooks.js';

type Outcome<T> = { row?: T; refused?: GuardRefusal; keys?: boolean };

export class PgUsers implements UserStore {
  constructor(private readonly t: PgTransactions) {}

  /**
   * The guard's answer inside the write's transaction, with the account's row locked (FOR UPDATE)
   * first: every guarded change to the account's people takes its turn behind it, on any server,
   * and reads what the one before it committed. `target` is the user about to stop being an owner.
   */
  private async refusal(
    db: PgClient,
    accountId: string,
    guard: MemberGuard | undefined,
    target?: UserRow,
  ): Promise<GuardRefusal | undefined> {
    if (!guard) return undefined;
    const account = await this.t.one<{ status: string }>(
      'SELECT status FROM accounts WHERE id = $1 FOR UPDATE',
      [accountId],
      db,
    );
    if (guard.activeAccount && account && account.status !== 'active') return 'inactive';
    if (guard.byOwner !== undefined) {
      const actor = await this.t.one(
        "SELECT 1 FROM users WHERE account_id = $1 AND email = $2 AND role = 'owner'",
        [accountId, guard.byOwner],
        db,
      );
      if (!actor) return 'not_owner';
    }
    if (guard.keepAnOwner && target) {
      // Read again under the lock: the role may have changed since the caller's read.
      const other = await this.t.one(
        "SELECT 1 FROM users WHERE account_id = $1 AND role = 'owner' AND id <> $2",
        [accountId, target.id],
        db,
      );
      const now = await this.t.one<{ role: string }>('SELECT role FROM users WHERE id = $1', [target.id], db);
      if (now?.role === 'owner' && !other) return 'last_owner';
    }
    return undefined;
  }

  async add(
    user: User,
    audit?: AuditEntry,
    guard?: MemberGuard,
  ): Promise<'added' | 'duplicate' | GuardRefusal> {
    return this.t.tx(
      async (db) => {
        const refused = await this.refusal(db, user.accountId, guard);
        if (refused) return refused;
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
    const row = await guarded(() => this.t.one<UserRow>('SELECT * FROM users WHERE id = $1', [id]));
    return row && toUser(row);
  }

  async list(accountId: string): Promise<User[]> {
    return guarded(async () =>
      (await this.t.all<UserRow>('SELECT * FROM users WHERE account_id = $1 ORDER BY id', [accountId])).map(
        toUser,
      ),
    );
  }

  async remove(
    id: string,
    audit?: AuditEntry,
    guard?: MemberGuard & UserRemoval,
  ): Promise<User | GuardRefusal | undefined> {
    const out = await this.t.tx(
      async (db): Promise<Outcome<UserRow>> => {
        const target = await this.t.one<UserRow>('SELECT * FROM users WHERE id = $1', [id], db);
        if (!target) return {};
        const refused = await this.refusal(db, target.account_id, guard, target);
        if (refused) return { refused };
        const removed = await this.t.one<UserRow>('DELETE FROM users WHERE id = $1 RETURNING *', [id], db);
        if (!removed) return {};
        await writeAudit(audit, db);
        let keys = false;
        const grants = guard?.revokeGrants;
        if (grants) {
          const revoked = await this.t.all<{ id: string }>(
            `UPDATE api_keys SET revoked_at = $1
             WHERE account_id = $2 AND hint = $3 AND revoked_at IS NULL AND id IN (
               SELECT id FROM oauth_models WHERE model = 'Grant' AND (payload::jsonb ->> 'accountId') = $4)
             RETURNING id`,
            [grants.at, removed.account_id, GRANT_HINT, grants.subject],
            db,
          );
          await recordEvents(
            revoked.map((k) => changeEvent('key.revoked', removed.account_id, grants.at, { key_id: k.id })),
            db,
          );
          keys = revoked.length > 0;
        }
        return { row: removed, keys };
      },
      (out): Change[] =>
        out.row ? [{ account: out.row.account_id }, ...(out.keys ? (['keys'] as const) : [])] : [],
    );
    return out.refused ?? (out.row && toUser(out.row));
  }

  async setRole(
    userId: string,
    role: UserRole,
    audit?: AuditEntry,
    guard?: MemberGuard,
  ): Promise<User | GuardRefusal | undefined> {
    const out = await this.t.tx(
      async (db): Promise<Outcome<UserRow>> => {
        const target = await this.t.one<UserRow>('SELECT * FROM users WHERE id = $1', [userId], db);
        if (!target) return {};
        const refused = await this.refusal(
          db,
          target.account_id,
          guard,
          role === 'owner' ? undefined : target,
        );
        if (refused) return { refused };
        const updated = await this.t.one<UserRow>(
          'UPDATE users SET role = $1 WHERE id = $2 RETURNING *',
          [role, userId],
          db,
        );
        if (updated) await writeAudit(audit, db);
        return updated ? { row: updated } : {};
      },
      (out): Change[] => (out.row ? [{ account: out.row.account_id }] : []),
    );
    return out.refused ?? (out.row && toUser(out.row));
  }
}
