/** @module The store of the OAuth server's models (oidc-provider's), one table on each backend. */
import type { EpochSeconds } from '../domain/clock.js';

/** One stored model of the OAuth server (src/oauth/adapter.ts): credential ids arrive here already hashed. */
export interface OAuthModelRow {
  model: string;
  id: string;
  /** The library's payload, as JSON. */
  payload: string;
  grantId: string | null;
  clientId: string | null;
  uid: string | null;
  createdAt: EpochSeconds;
  expiresAt: EpochSeconds | null;
  consumedAt: EpochSeconds | null;
}

/** The OAuth server's models (clients, grants, codes, tokens, sessions, interactions), shared by every server. */
export interface OAuthStore {
  /** Creates or replaces the row (a replaced row keeps when it was consumed). */
  upsert(row: Omit<OAuthModelRow, 'consumedAt'>): Promise<void>;
  /** The row, unless it has expired by `now`. */
  find(model: string, id: string, now: EpochSeconds): Promise<OAuthModelRow | undefined>;
  findByUid(model: string, uid: string, now: EpochSeconds): Promise<OAuthModelRow | undefined>;
  consume(model: string, id: string, at: EpochSeconds): Promise<void>;
  destroy(model: string, id: string): Promise<void>;
  revokeByGrantId(model: string, grantId: string): Promise<void>;
  /**
   * Deletes expired rows and the clients registered before `unusedClientsBefore` that no grant
   * names (clients such as claude.ai register anew for each connection); how many rows.
   */
  prune(now: EpochSeconds, unusedClientsBefore: EpochSeconds): Promise<number>;
  /**
   * Deletes the oldest registered clients that no grant names, keeping the newest `keep` of them;
   * how many were deleted.
   */
  trimUnusedClients(keep: number): Promise<number>;
  /**
   * One transaction: marks `consumed` consumed (unless it already is, or `again`) and writes `rows`.
   * Whether it did: false (and nothing written) when `consumed` was already consumed or is gone.
   */
  rotate(
    consumed: { model: string; id: string; at: EpochSeconds; again?: boolean },
    rows: Omit<OAuthModelRow, 'consumedAt'>[],
  ): Promise<boolean>;
}

/** A row of `oauth_models` as either driver gives it (PostgreSQL's BIGINT columns may come as text). */
export interface OAuthRow {
  model: string;
  id: string;
  payload: string;
  grant_id: string | null;
  client_id: string | null;
  uid: string | null;
  created_at: string | number;
  expires_at: string | number | null;
  consumed_at: string | number | null;
}

const seconds = (v: string | number | null) => (v === null ? null : Number(v));

export const toOAuthModelRow = (r: OAuthRow): OAuthModelRow => ({
  model: r.model,
  id: r.id,
  payload: r.payload,
  grantId: r.grant_id,
  clientId: r.client_id,
  uid: r.uid,
  createdAt: Number(r.created_at),
  expiresAt: seconds(r.expires_at),
  consumedAt: seconds(r.consumed_at),
});
