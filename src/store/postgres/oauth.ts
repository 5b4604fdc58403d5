/** @module PostgreSQL's store of the OAuth server's models (store.ts, OAuthStore). */
import type { EpochSeconds } from '../../domain/clock.js';
import { type OAuthModelRow, type OAuthRow, type OAuthStore, toOAuthModelRow } from '../oauth-store.js';
import { guard, type PgQueryable } from './driver.js';
import type { PgTransactions } from './transactions.js';

const LIVE = '(expires_at IS NULL OR expires_at > $3)';

export class PgOAuth implements OAuthStore {
  constructor(private readonly t: PgTransactions) {}

  async upsert(r: Omit<OAuthModelRow, 'consumedAt'>): Promise<void> {
    await guard(() => put(this.t.pool, r));
  }

  rotate(
    consumed: { model: string; id: string; at: EpochSeconds; again?: boolean },
    rows: Omit<OAuthModelRow, 'consumedAt'>[],
  ): Promise<boolean> {
    return this.t.tx(async (db) => {
      const done = await db.query(
        'UPDATE oauth_models SET consumed_at = $1 WHERE model = $2 AND id = $3 AND (consumed_at IS NULL OR $4)',
        [consumed.at, consumed.model, consumed.id, consumed.again === true],
      );
      if ((done.rowCount ?? 0) === 0) return false;
      for (const row of rows) await put(db, row);
      return true;
    });
  }

  async trimUnusedClients(keep: number): Promise<number> {
    const gone = await guard(() =>
      this.t.pool.query(
        `DELETE FROM oauth_models WHERE model = 'Client' AND id IN (
           SELECT id FROM oauth_models WHERE model = 'Client' AND id NOT IN
             (SELECT client_id FROM oauth_models WHERE model = 'Grant' AND client_id IS NOT NULL)
           ORDER BY created_at DESC, id DESC OFFSET $1)`,
        [keep],
      ),
    );
    return gone.rowCount ?? 0;
  }

  async find(model: string, id: string, now: EpochSeconds): Promise<OAuthModelRow | undefined> {
    const row = await guard(() =>
      this.t.one<OAuthRow>(`SELECT * FROM oauth_models WHERE model = $1 AND id = $2 AND ${LIVE}`, [
        model,
        id,
        now,
      ]),
    );
    return row && toOAuthModelRow(row);
  }

  async findByUid(model: string, uid: string, now: EpochSeconds): Promise<OAuthModelRow | undefined> {
    const row = await guard(() =>
      this.t.one<OAuthRow>(`SELECT * FROM oauth_models WHERE model = $1 AND uid = $2 AND ${LIVE} LIMIT 1`, [
        model,
        uid,
        now,
      ]),
    );
    return row && toOAuthModelRow(row);
  }

  async consume(model: string, id: string, at: EpochSeconds): Promise<void> {
    await guard(() =>
      this.t.pool.query(
        'UPDATE oauth_models SET consumed_at = $1 WHERE model = $2 AND id = $3 AND consumed_at IS NULL',
        [at, model, id],
      ),
    );
  }

  async destroy(model: string, id: string): Promise<void> {
    await guard(() =>
      this.t.pool.query('DELETE FROM oauth_models WHERE model = $1 AND id = $2', [model, id]),
    );
  }

  async revokeByGrantId(model: string, grantId: string): Promise<void> {
    await guard(() =>
      this.t.pool.query('DELETE FROM oauth_models WHERE model = $1 AND grant_id = $2', [model, grantId]),
    );
  }

  async prune(now: EpochSeconds, unusedClientsBefore: EpochSeconds): Promise<number> {
    const expired = await guard(() =>
      this.t.pool.query('DELETE FROM oauth_models WHERE expires_at <= $1', [now]),
    );
    const unused = await guard(() =>
      this.t.pool.query(
        `DELETE FROM oauth_models WHERE model = 'Client' AND created_at < $1 AND id NOT IN
           (SELECT client_id FROM oauth_models WHERE model = 'Grant' AND client_id IS NOT NULL)`,
        [unusedClientsBefore],
      ),
    );
    return (expired.rowCount ?? 0) + (unused.rowCount ?? 0);
  }
}

function put(db: PgQueryable, r: Omit<OAuthModelRow, 'consumedAt'>) {
  return db.query(
    `INSERT INTO oauth_models (model, id, payload, grant_id, client_id, uid, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (model, id) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id,
           client_id = excluded.client_id, uid = excluded.uid, expires_at = excluded.expires_at`,
    [r.model, r.id, r.payload, r.grantId, r.clientId, r.uid, r.createdAt, r.expiresAt],
  );
}
