/**
 * @module The oidc-provider Adapter over the store's OAuth models (store.ts, OAuthStore), so that
 * every server of a deployment sees the same clients, grants, codes, tokens and sessions. An id
 * that is itself a credential (a token, a code, a session's cookie) is stored only as its SHA-256:
 * it is hashed on the way in and on every lookup, so the database never holds a usable one.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import { StoreUnavailableError } from '../domain/errors.js';
import type { OAuthModelRow, OAuthStore } from '../store/oauth-store.js';

/** The models whose ids name no secret: a client's id is public, a grant's id is its key id. */
const PLAIN_IDS = new Set(['Client', 'Grant']);

export const hashId = (id: string): string => createHash('sha256').update(id).digest('base64url');

const nowSeconds = () => Math.floor(Date.now() / 1000);

type Row = Omit<OAuthModelRow, 'consumedAt'>;

/**
 * A refresh token's rotation, held back for the length of one request: the library consumes the old
 * token, saves the new one, then saves the access token, in three writes. Here the consumption and
 * the new refresh token wait for the access token and the three are written in one transaction, so
 * a failure anywhere before it (the database cut, the process gone) leaves the old refresh token
 * valid and the client's retry succeeds instead of counting as reuse.
 */
interface Rotation {
  consumed: { model: string; id: string; at: number; again?: boolean };
  rows: Row[];
}

/** How long a rotation that failed as unavailable may be retried with the same refresh token. */
const UNCERTAIN_MS = 5 * 60_000;
const MAX_UNCERTAIN = 10_000;

const requestScope = new AsyncLocalStorage<{ rotation?: Rotation }>();

/** Runs one request of the provider (its callback) with its own rotation scope. */
export const inRequestScope = <T>(fn: () => T): T => requestScope.run({}, fn);

/**
 * A store that could not be reached or could not write: both backends turn their drivers' errors
 * into StoreUnavailableError (postgres/driver.ts isUnavailable, the SQLite executor), so that is all
 * there is to ask.
 */
export const isStoreUnavailable = (err: unknown): boolean => err instanceof StoreUnavailableError;

export interface AdapterErrors {
  /** The error the library answers when the store is unavailable (503 temporarily_unavailable). */
  unavailable: () => Error;
  /** The error for a refresh token another request consumed first (invalid_grant). */
  alreadyUsed: () => Error;
}

/**
 * Refresh tokens (hashed ids) whose rotation failed as unavailable on this server, until when (ms):
 * the COMMIT may have gone through with its answer lost, so the client's retry with the same token
 * is a retry, not a reuse, and rotates it again instead of revoking the grant.
 */
class UncertainRotations {
  private readonly until = new Map<string, number>();

  has(id: string): boolean {
    const until = this.until.get(id);
    if (until !== undefined && until < Date.now()) this.until.delete(id);
    return until !== undefined && until >= Date.now();
  }

  add(id: string): void {
    if (this.until.size >= MAX_UNCERTAIN) this.until.delete(this.until.keys().next().value as string);
    this.until.set(id, Date.now() + UNCERTAIN_MS);
  }

  delete(id: string): void {
    this.until.delete(id);
  }
}

/** What every model's adapter of one provider shares. */
interface AdapterContext {
  store: OAuthStore;
  errors: AdapterErrors;
  grantActive: ((grantId: string) => Promise<boolean>) | undefined;
  uncertain: UncertainRotations;
}

const DEFAULT_ERRORS: AdapterErrors = {
  unavailable: () => new StoreUnavailableError('unavailable'),
  alreadyUsed: () => new Error('already used'),
};

/**
 * The adapter class oidc-provider instantiates once per model name. `grantActive` is asked of every
 * Grant found: a grant whose key row was revoked (its person removed, its account closed, the
 * console's Revoke) is not found, so the library refuses what needs it (a refresh: `invalid_grant`)
 * even where its own rows of that grant are still there.
 */
export function storeAdapter(
  store: OAuthStore,
  errors: AdapterErrors = DEFAULT_ERRORS,
  grantActive?: (grantId: string) => Promise<boolean>,
): new (
  name: string,
) => Adapter {
  const ctx: AdapterContext = { store, errors, grantActive, uncertain: new UncertainRotations() };
  return class extends StoreAdapter {
    constructor(name: string) {
      super(name, ctx);
    }
  };
}

class StoreAdapter implements Adapter {
  private readonly key: (id: string) => string;
  private readonly hashed: boolean;

  constructor(
    private readonly name: string,
    private readonly ctx: AdapterContext,
  ) {
    this.hashed = !PLAIN_IDS.has(name);
    this.key = this.hashed ? hashId : (id) => id;
  }

  /** `fn` on the store, its unavailability answered as the library's 503. */
  private async guarded<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw isStoreUnavailable(err) ? this.ctx.errors.unavailable() : err;
    }
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    const now = nowSeconds();
    const row: Row = {
      model: this.name,
      id: this.key(id),
      // The payload repeats the id as `jti` (an opaque token's value): kept out, put back by find.
      payload: JSON.stringify(this.hashed ? { ...payload, jti: undefined } : payload),
      grantId: payload.grantId ?? null,
      clientId: payload.clientId ?? null,
      uid: payload.uid ?? null,
      createdAt: now,
      expiresAt: expiresIn ? now + expiresIn : null,
    };
    const rotation = requestScope.getStore()?.rotation;
    if (rotation && (this.name === 'RefreshToken' || this.name === 'AccessToken')) {
      rotation.rows.push(row);
      if (this.name === 'AccessToken') await this.finishRotation(rotation);
      return;
    }
    await this.guarded(() => this.ctx.store.upsert(row));
  }

  /**
   * The access token ends the rotation: the old refresh token consumed, the new one and the access
   * token stored, together or not at all.
   */
  private async finishRotation(rotation: Rotation): Promise<void> {
    const scope = requestScope.getStore();
    if (scope) scope.rotation = undefined;
    const { uncertain, errors } = this.ctx;
    let done: boolean;
    try {
      done = await this.ctx.store.rotate(rotation.consumed, rotation.rows);
    } catch (err) {
      if (!isStoreUnavailable(err)) throw err;
      uncertain.add(rotation.consumed.id);
      throw errors.unavailable();
    }
    if (!done) throw errors.alreadyUsed();
    uncertain.delete(rotation.consumed.id);
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const key = this.key(id);
    const { store, grantActive } = this.ctx;
    let payload = this.payload(await this.guarded(() => store.find(this.name, key, nowSeconds())));
    if (payload?.consumed && this.name === 'RefreshToken' && this.ctx.uncertain.has(key)) {
      const { consumed: _, ...unspent } = payload;
      payload = unspent;
    }
    // Asked of the store too: its failure is the same 503 as the row's own read.
    if (payload && this.name === 'Grant' && grantActive && !(await this.guarded(() => grantActive(id))))
      return undefined;
    return payload && this.hashed ? { ...payload, jti: id } : payload;
  }

  /** A session by its uid: without its id (only its hash is kept), which its callers only read. */
  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.payload(await this.guarded(() => this.ctx.store.findByUid(this.name, uid, nowSeconds())));
  }

  async findByUserCode(): Promise<undefined> {
    // The device flow is off: no model has a user code.
    return undefined;
  }

  async consume(id: string): Promise<void> {
    const scope = requestScope.getStore();
    if (scope && this.name === 'RefreshToken') {
      // Held back until the access token of this request is stored (Rotation).
      const key = this.key(id);
      scope.rotation = {
        consumed: { model: this.name, id: key, at: nowSeconds(), again: this.ctx.uncertain.has(key) },
        rows: [],
      };
      return;
    }
    await this.guarded(() => this.ctx.store.consume(this.name, this.key(id), nowSeconds()));
  }

  async destroy(id: string): Promise<void> {
    await this.guarded(() => this.ctx.store.destroy(this.name, this.key(id)));
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.guarded(() => this.ctx.store.revokeByGrantId(this.name, grantId));
  }

  private payload(
    row: { payload: string; consumedAt: number | null } | undefined,
  ): AdapterPayload | undefined {
    if (!row) return undefined;
    const payload = JSON.parse(row.payload) as AdapterPayload;
    return row.consumedAt === null ? payload : { ...payload, consumed: row.consumedAt };
  }
}
