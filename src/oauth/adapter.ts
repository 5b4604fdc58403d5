/**
 * @module The oidc-provider Adapter over the store's OAuth models (store.ts, OAuthStore), so that
 * every server of a deployment sees the same clients, grants, codes, tokens and sessions. An id
 * that is itself a credential (a token, a code, a session's cookie) is stored only as its SHA-256:
 * it is hashed on the way in and on every lookup, so the database never holds a usable one.
 */
import { createHash } from 'node:crypto';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { OAuthStore } from '../store/oauth-store.js';

/** The models whose ids name no secret: a client's id is public, a grant's id is its key id. */
const PLAIN_IDS = new Set(['Client', 'Grant']);

export const hashId = (id: string): string => createHash('sha256').update(id).digest('base64url');

const nowSeconds = () => Math.floor(Date.now() / 1000);

/**
 * The adapter class oidc-provider instantiates once per model name. `grantActive` is asked of every
 * Grant found: a grant whose key row was revoked (its person removed, its account closed, the
 * console's Revoke) is not found, so the library refuses what needs it (a refresh: `invalid_grant`)
 * even where its own rows of that grant are still there.
 */
export function storeAdapter(
  store: OAuthStore,
  grantActive?: (grantId: string) => Promise<boolean>,
): new (
  name: string,
) => Adapter {
  return class StoreAdapter implements Adapter {
    private readonly key: (id: string) => string;

    private readonly hashed: boolean;

    constructor(private readonly name: string) {
      this.hashed = !PLAIN_IDS.has(name);
      this.key = this.hashed ? hashId : (id) => id;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      const now = nowSeconds();
      await store.upsert({
        model: this.name,
        id: this.key(id),
        // The payload repeats the id as `jti` (an opaque token's value): kept out, put back by find.
        payload: JSON.stringify(this.hashed ? { ...payload, jti: undefined } : payload),
        grantId: payload.grantId ?? null,
        clientId: payload.clientId ?? null,
        uid: payload.uid ?? null,
        createdAt: now,
        expiresAt: expiresIn ? now + expiresIn : null,
      });
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      const payload = this.payload(await store.find(this.name, this.key(id), nowSeconds()));
      if (payload && this.name === 'Grant' && grantActive && !(await grantActive(id))) return undefined;
      return payload && this.hashed ? { ...payload, jti: id } : payload;
    }

    /** A session by its uid: without its id (only its hash is kept), which its callers only read. */
    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return this.payload(await store.findByUid(this.name, uid, nowSeconds()));
    }

    async findByUserCode(): Promise<undefined> {
      // The device flow is off: no model has a user code.
      return undefined;
    }

    async consume(id: string): Promise<void> {
      await store.consume(this.name, this.key(id), nowSeconds());
    }

    async destroy(id: string): Promise<void> {
      await store.destroy(this.name, this.key(id));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await store.revokeByGrantId(this.name, grantId);
    }

    private payload(
      row: { payload: string; consumedAt: number | null } | undefined,
    ): AdapterPayload | undefined {
      if (!row) return undefined;
      const payload = JSON.parse(row.payload) as AdapterPayload;
      return row.consumedAt === null ? payload : { ...payload, consumed: row.consumedAt };
    }
  };
}
