/**
 * @module SQLite's API keys (store.keys: create, get, list, revoke, rehash, touch, findActive):
 * the digest and display hint only, never a key.
 */
import { type ApiKeyRecord, LAST_USED_RESOLUTION_SECONDS } from '../../domain/api-keys.js';
import type { AuditEntry } from '../../domain/audit.js';
import type { EpochSeconds } from '../../domain/clock.js';
import { changeEvent, keyCreated } from '../../domain/webhooks.js';
import type { Change } from '../changes.js';
import type { KeyEntry, KeyStore } from '../keys-store.js';
import { type KeyRow, toKey } from '../rows.js';
import { writeAudit } from './audit.js';
import type { SqliteExecutor } from './executor.js';
import { recordEvents } from './webhooks.js';

export class SqliteApiKeys implements KeyStore {
  constructor(private readonly x: SqliteExecutor) {}

  async create(key: ApiKeyRecord, digest: string, audit?: AuditEntry): Promise<void> {
    await this.x.writeTx(
      () => {
        this.x
          .sql(
            `INSERT INTO api_keys (id, account_id, name, digest, hint, created_at, revoked_at, last_used_at)
             VALUES (?, ?, ?, ?, ?, ?, NULL, NULL)`,
          )
          .run(key.id, key.accountId, key.name, digest, key.hint, key.createdAt);
        writeAudit(this.x, audit);
        recordEvents(this.x, [keyCreated(key)]);
      },
      () => [{ account: key.accountId }],
    );
  }

  static readonly KEY_COLUMNS = 'id, account_id, name, hint, created_at, revoked_at, last_used_at';

  async get(id: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.x.attempt(
      () =>
        this.x.sql(`SELECT ${SqliteApiKeys.KEY_COLUMNS} FROM api_keys WHERE id = ?`).get(id) as
          | KeyRow
          | undefined,
    );
    return row && toKey(row);
  }

  async list(accountId: string): Promise<ApiKeyRecord[]> {
    const rows = await this.x.attempt(
      () =>
        this.x
          .sql(`SELECT ${SqliteApiKeys.KEY_COLUMNS} FROM api_keys WHERE account_id = ? ORDER BY id`)
          .all(accountId) as KeyRow[],
    );
    return rows.map(toKey);
  }

  async revoke(id: string, now: EpochSeconds, audit?: AuditEntry): Promise<ApiKeyRecord | undefined> {
    await this.x.writeTx(
      () => {
        const { changes } = this.x
          .sql('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL')
          .run(now, id);
        const key = this.x.sql('SELECT account_id FROM api_keys WHERE id = ?').get(id) as
          | { account_id: string }
          | undefined;
        if (changes === 1) {
          writeAudit(this.x, audit);
          recordEvents(this.x, [changeEvent('key.revoked', key!.account_id, now, { key_id: id })]);
        }
        return key?.account_id;
      },
      (accountId): Change[] => (accountId ? ['keys', { account: accountId }] : ['keys']),
    );
    return this.get(id);
  }

  async rehash(id: string, oldDigest: string, newDigest: string): Promise<void> {
    await this.x.write(
      () =>
        this.x
          .sql('UPDATE api_keys SET digest = ? WHERE id = ? AND digest = ?')
          .run(newDigest, id, oldDigest),
      () => ['keys'],
    );
  }

  async touch(entries: readonly { id: string; at: EpochSeconds }[]): Promise<void> {
    if (entries.length === 0) return;
    await this.x.writeTx(() => {
      const touch = this.x.sql(
        'UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at <= ?)',
      );
      for (const e of entries) touch.run(e.at, e.id, e.at - LAST_USED_RESOLUTION_SECONDS);
    });
  }

  findActive(digest: string): Promise<KeyEntry | undefined> {
    return this.x.attempt(() => {
      const row = this.x
        .sql('SELECT id, account_id FROM api_keys WHERE digest = ? AND revoked_at IS NULL')
        .get(digest) as { id: string; account_id: string } | undefined;
      return row && { keyId: row.id, accountId: row.account_id };
    });
  }
}
