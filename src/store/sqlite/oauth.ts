/** @module SQLite's store of the OAuth server's models (store.ts, OAuthStore). */
import type { EpochSeconds } from '../../domain/clock.js';
import { type OAuthModelRow, type OAuthRow, type OAuthStore, toOAuthModelRow } from '../oauth-store.js';
import type { SqliteExecutor } from './executor.js';

const LIVE = '(expires_at IS NULL OR expires_at > ?)';

export class SqliteOAuth implements OAuthStore {
  constructor(private readonly x: SqliteExecutor) {}

  async upsert(r: Omit<OAuthModelRow, 'consumedAt'>): Promise<void> {
    await this.x.write(() => this.put(r));
  }

  private put(r: Omit<OAuthModelRow, 'consumedAt'>) {
    this.x
      .sql(
        `INSERT INTO oauth_models (model, id, payload, grant_id, client_id, uid, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (model, id) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id,
           client_id = excluded.client_id, uid = excluded.uid, expires_at = excluded.expires_at`,
      )
      .run(r.model, r.id, r.payload, r.grantId, r.clientId, r.uid, r.createdAt, r.expiresAt);
  }

  rotate(
    consumed: { model: string; id: string; at: EpochSeconds; again?: boolean },
    rows: Omit<OAuthModelRow, 'consumedAt'>[],
  ): Promise<boolean> {
    return this.x.writeTx(() => {
      const done = this.x
        .sql(
          'UPDATE oauth_models SET consumed_at = ? WHERE model = ? AND id = ? AND (consumed_at IS NULL OR ?)',
        )
        .run(consumed.at, consumed.model, consumed.id, consumed.again ? 1 : 0).changes;
      if (done === 0) return false;
      for (const row of rows) this.put(row);
      return true;
    });
  }

  trimUnusedClients(keep: number): Promise<number> {
    return this.x.writeTx(
      () =>
        this.x
          .sql(
            `DELETE FROM oauth_models WHERE model = 'Client' AND id IN (
               SELECT id FROM oauth_models WHERE model = 'Client' AND id NOT IN
                 (SELECT client_id FROM oauth_models WHERE model = 'Grant' AND client_id IS NOT NULL)
               ORDER BY created_at DESC, id DESC LIMIT -1 OFFSET ?)`,
          )
          .run(keep).changes,
    );
  }

  async find(model: string, id: string, now: EpochSeconds): Promise<OAuthModelRow | undefined> {
    const row = await this.x.attempt(
      () =>
        this.x.sql(`SELECT * FROM oauth_models WHERE model = ? AND id = ? AND ${LIVE}`).get(model, id, now) as
          | OAuthRow
          | undefined,
    );
    return row && toOAuthModelRow(row);
  }

  async findByUid(model: string, uid: string, now: EpochSeconds): Promise<OAuthModelRow | undefined> {
    const row = await this.x.attempt(
      () =>
        this.x
          .sql(`SELECT * FROM oauth_models WHERE model = ? AND uid = ? AND ${LIVE} LIMIT 1`)
          .get(model, uid, now) as OAuthRow | undefined,
    );
    return row && toOAuthModelRow(row);
  }

  async consume(model: string, id: string, at: EpochSeconds): Promise<void> {
    await this.x.write(() =>
      this.x
        .sql('UPDATE oauth_models SET consumed_at = ? WHERE model = ? AND id = ? AND consumed_at IS NULL')
        .run(at, model, id),
    );
  }

  async destroy(model: string, id: string): Promise<void> {
    await this.x.write(() =>
      this.x.sql('DELETE FROM oauth_models WHERE model = ? AND id = ?').run(model, id),
    );
  }

  async revokeByGrantId(model: string, grantId: string): Promise<void> {
    await this.x.write(() =>
      this.x.sql('DELETE FROM oauth_models WHERE model = ? AND grant_id = ?').run(model, grantId),
    );
  }

  prune(now: EpochSeconds, unusedClientsBefore: EpochSeconds): Promise<number> {
    return this.x.writeTx(() => {
      const expired = this.x.sql('DELETE FROM oauth_models WHERE expires_at <= ?').run(now).changes;
      const unused = this.x
        .sql(
          `DELETE FROM oauth_models WHERE model = 'Client' AND created_at < ? AND id NOT IN
             (SELECT client_id FROM oauth_models WHERE model = 'Grant' AND client_id IS NOT NULL)`,
        )
        .run(unusedClientsBefore).changes;
      return expired + unused;
    });
  }
}
