/** @module The users of an account. */
import type { AuditEntry } from '../domain/audit.js';
import type { User } from '../domain/users.js';

export interface UserStore {
  /** 'duplicate' when the account already has a user with this email. */
  add(user: User, audit?: AuditEntry): Promise<'added' | 'duplicate'>;
  get(id: string): Promise<User | undefined>;
  list(accountId: string): Promise<User[]>;
  remove(id: string, audit?: AuditEntry): Promise<User | undefined>;
}
