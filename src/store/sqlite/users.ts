/** @module SQLite's users of an account (store.users). */
import { GRANT_HINT } from '../../domain/api-keys.js';
import type { AuditEntry } from '../../domain/audit.js';
import type { User, UserRole } from '../../domain/users.js';
import { changeEvent } from '../../domain/webhooks.js';
import type { Change } from '../changes.js';
import { toUser, type UserRow } from '../rows.js';
import type { GuardRefusal, MemberGuard, UserRemoval, UserStore } from '../users-store.js';
import { writeAudit } from './audit.js';
import type { SqliteExecutor } from './executor.js';
import { recordEvents } from './webhooks.js';

type Outcome<T> = { row?: T; refused?: GuardRefusal; keys?: boolean };

export class SqliteUsers implements UserStore {
  constructor(private readonly x: SqliteExecutor) {}

  /**
   * The guard's answer, read inside the write's transaction (SQLite's writes take turns: nothing
   * changes between this read and the write after it). `target` is the user about to stop being an
   * owner, if any.
   */
  private refusal(
    accountId: string,
    guard: MemberGuard | undefined,
    target?: UserRow,
  ): GuardRefusal | undefined {
    if (!guard) return undefined;
    if (guard.activeAccount) {
      const account = this.x.sql('SELECT status FROM accounts WHERE id = ?').get(accountId) as
        | { status: string }
        | undefined;
      if (account && account.status !== 'active') return 'inactive';
    }
    if (guard.byOwner !== undefined) {
      const actor = this.x
        .sql("SELECT 1 AS one FROM users WHERE account_id = ? AND email = ? AND role = 'owner'")
        .get(accountId, guard.byOwner);
      if (!actor) return 'not_owner';
    }
    if (guard.keepAnOwner && target?.role === 'owner') {
      const other = this.x
        .sql("SELECT 1 AS one FROM users WHERE account_id = ? AND role = 'owner' AND id <> ?")
        .get(accountId, target.id);
      if (!other) return 'last_owner';
    }
    return undefined;
  }

  add(user: User, audit?: AuditEntry, guard?: MemberGuard): Promise<'added' | 'duplicate' | GuardRefusal> {
    return this.x.writeTx(
      () => {
        const refused = this.refusal(user.accountId, guard);
        if (refused) return refused;
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
      (outcome) => (outcome === 'added' ? [{ account: user.accountId }] : []),
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

  async remove(
    id: string,
    audit?: AuditEntry,
    guard?: MemberGuard & UserRemoval,
  ): Promise<User | GuardRefusal | undefined> {
    const out = await this.x.writeTx(
      (): Outcome<UserRow> => {
        const target = this.x.sql('SELECT * FROM users WHERE id = ?').get(id) as UserRow | undefined;
        if (!target) return {};
        const refused = this.refusal(target.account_id, guard, target);
        if (refused) return { refused };
        this.x.sql('DELETE FROM users WHERE id = ?').run(id);
        writeAudit(this.x, audit);
        let keys = false;
        const grants = guard?.revokeGrants;
        if (grants) {
          const revoked = this.x
            .sql(
              `UPDATE api_keys SET revoked_at = ?
               WHERE account_id = ? AND hint = ? AND revoked_at IS NULL AND id IN (
                 SELECT id FROM oauth_models WHERE model = 'Grant' AND json_extract(payload, '$.accountId') = ?)
               RETURNING id`,
            )
            .all(grants.at, target.account_id, GRANT_HINT, grants.subject) as { id: string }[];
          recordEvents(
            this.x,
            revoked.map((k) => changeEvent('key.revoked', target.account_id, grants.at, { key_id: k.id })),
          );
          keys = revoked.length > 0;
        }
        return { row: target, keys };
      },
      (out): Change[] =>
        out?.row ? [{ account: out.row.account_id }, ...(out.keys ? (['keys'] as const) : [])] : [],
    );
    return out.refused ?? (out.row && toUser(out.row));
  }

  async setRole(
    userId: string,
    role: UserRole,
    audit?: AuditEntry,
    guard?: MemberGuard,
  ): Promise<User | GuardRefusal | undefined> {
    const out = await this.x.writeTx(
      (): Outcome<UserRow> => {
        const target = this.x.sql('SELECT * FROM users WHERE id = ?').get(userId) as UserRow | undefined;
        if (!target) return {};
        const refused = this.refusal(target.account_id, guard, role === 'owner' ? undefined : target);
        if (refused) return { refused };
        const updated = this.x.sql('UPDATE users SET role = ? WHERE id = ? RETURNING *').get(role, userId) as
          | UserRow
          | undefined;
        if (updated) writeAudit(this.x, audit);
        return updated ? { row: updated } : {};
      },
      (out): Change[] => (out?.row ? [{ account: out.row.account_id }] : []),
    );
    return out.refused ?? (out.row && toUser(out.row));
  }
}
