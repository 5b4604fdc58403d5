/** @module API keys: their digest and display hint only, never a key. */
import type { ApiKeyRecord } from '../domain/api-keys.js';
import type { AuditEntry } from '../domain/audit.js';
import type { EpochSeconds } from '../domain/clock.js';

/** An active key, as found by its digest: which key, and whose. */
export interface KeyEntry {
  keyId: string;
  accountId: string;
}

export interface KeyStore {
  create(key: ApiKeyRecord, digest: string, audit?: AuditEntry): Promise<void>;
  get(id: string): Promise<ApiKeyRecord | undefined>;
  list(accountId: string): Promise<ApiKeyRecord[]>;
  /** Revokes (idempotently: audited only when it was active); undefined when there is no such key. */
  revoke(id: string, now: EpochSeconds, audit?: AuditEntry): Promise<ApiKeyRecord | undefined>;
  /**
   * Sets last_used_at of each key where it is unset or at least LAST_USED_RESOLUTION_SECONDS older
   * (so never moving it back); the whole batch in one transaction.
   */
  touch(entries: readonly { id: string; at: EpochSeconds }[]): Promise<void>;
  /** Replaces a key's digest (secret rotation), only if it still has `oldDigest`. */
  rehash(id: string, oldDigest: string, newDigest: string): Promise<void>;
  /** The key with this digest, if it exists and is not revoked. */
  findActive(digest: string): KeyEntry | undefined | Promise<KeyEntry | undefined>;
}
