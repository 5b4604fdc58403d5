/** @module The audit trail, read a page at a time (entries are written by the changes they describe). */
import type { AuditEntry } from '../domain/audit.js';
import type { Page } from './page.js';

export interface AuditQuery extends Page {
  /** Only the entries about this account (plans belong to none, so they are left out). */
  accountId?: string;
}

export interface AuditStore {
  /** Audit entries in id order (oldest first), a page at a time. */
  list(query: AuditQuery): Promise<AuditEntry[]>;
}
