/** @module PostgreSQL's API keys (store.keys): the digest and display hint only, never a key. */
import { type ApiKeyRecord, LAST_USED_RESOLUTION_SECONDS } from '../../domain/api-keys.js';
import type { AuditEntry } from '../../domain/audit.js';
import type { EpochSeconds } from '../../domain/clock.js';
import { changeEvent, keyCreated } from '../../domain/webhooks.js';
import type { Change } from '../changes.js';
import type { KeyEntry, KeyStore } from '../keys-store.js';
import { type KeyRow, toKey } from '../rows.js';
import { writeAudit } from './audit.js';
import { guard } from './driver.js';
import type { PgTransactions } from './transactions.js';
import { recordEvents } from './webhooks.js';

const KEY_COLUMNS = 'id, account_id, name, hint, created_at, revoked_at, last_used_at';

export class PgApiKeys implements KeyStore {
  constructor(private readonly t: PgTransactions) {}

  async create(key: ApiKeyRecord, digest: string, audit?: AuditEntry): Promise<void> {
    await this.t.tx(
      async (db) => {
        await db.query(
          `INSERT INTO api_keys (id, account_id, name, digest, hint, created_at, revoked_at, last_used_at)
         VALUES ($1, $2, $3, $4, $5, $6, NULL, NULL)`,
          [key.id, key.accountId, key.name, digest, key.hint, key.createdAt],
        );
        await writeAudit(audit, db);
        await recordEvents([keyCreated(key)], db);
      },
      () => [{ account: key.accountId }],
    );
  }

  async get(id: string): Promise<ApiKeyRecord | undefined> {
    const row = await guard(() =>
      this.t.one<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1`, [id]),
    );
    return row && toKey(row);
  }

  async list(accountId: string): Promise<ApiKeyRecord[]> {
    const rows = await guard(() =>
      this.t.all<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = $1 ORDER BY id`, [
        accountId,
      ]),
    );
    return rows.map(toKey);
  }

  async revoke(id: string, now: EpochSeconds, audit?: AuditEntry): Promise<ApiKeyRecord | undefined> {
    await this.t.tx(
      async (db) => {
        const revoked = await this.t.one<{ account_id: string }>(
          'UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING account_id',
          [now, id],
          db,
        );
        if (revoked) {
          await writeAudit(audit, db);
          await recordEvents([changeEvent('key.revoked', revoked.account_id, now, { key_id: id })], db);
        }
        return revoked?.account_id;
      },
      (accountId): Change[] => (accountId ? ['keys', { account: accountId }] : []),
    );
    return this.get(id);
  }

  async rehash(id: string, oldDigest: string, newDigest: string): Promise<void> {
    await this.t.tx(
      (db) =>
        db.query('UPDATE api_keys SET digest = $1 WHERE id = $2 AND digest = $3', [newDigest, id, oldDigest]),
      () => ['keys'],
    );
  }

  async touch(entries: readonly { id: string; at: EpochSeconds }[]): Promise<void> {
    if (entries.length === 0) return;
    await guard(() =>
      this.t.pool.query(
        `UPDATE api_keys k SET last_used_at = v.at
         FROM unnest($1::text[], $2::bigint[]) AS v (id, at)
         WHERE k.id = v.id AND (k.last_used_at IS NULL OR k.last_used_at <= v.at - $3::bigint)`,
        [entries.map((e) => e.id), entries.map((e) => e.at), LAST_USED_RESOLUTION_SECONDS],
      ),
    );
  }

  async findActive(digest: string): Promise<KeyEntry | undefined> {
    const row = await guard(() =>
      this.t.one<{ id: string; account_id: string }>(
        {
          name: 'tg_find_key',
          text: 'SELECT id, account_id FROM api_keys WHERE digest = $1 AND revoked_at IS NULL',
        },
        [digest],
      ),
    );
    return row && { keyId: row.id, accountId: row.account_id };
  }
}
