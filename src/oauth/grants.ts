/**
 * @module A grant is an API key's equal: consenting makes a key row for it (its id is the grant's
 * id, its name the client's), so rate limits, fair use, tokens, usage history, webhooks and
 * `toolgate keys list` treat it as any key. The row's digest is of no presentable key: only the
 * grant's tokens reach it. Revoking the row (here, or by the revocation endpoint) is seen by every
 * server through the change feed that keeps key caches true.
 */
import type { ApiKeyRecord } from '../domain/api-keys.js';
import { digestKey, GRANT_HINT } from '../domain/api-keys.js';
import { type Clock, nowSeconds } from '../domain/clock.js';
import { newId } from '../domain/ids.js';
import { actingAs, draftAudit } from '../service/audit.js';
import type { Store } from '../store/store.js';

/** What a grant's key row is kept with: the store's keys, and the clock. */
export interface GrantKeyDeps {
  store: Pick<Store, 'keys'>;
  clock: Clock;
}

export { GRANT_HINT };

/** The digest a grant's key row is found by, from the grant's id. */
export const grantDigest = (secret: string, grantId: string) => digestKey(secret, `oauth-grant:${grantId}`);

/** `user:<email> via oauth:<client id>`: who acts when a person acts through a connector. */
export const grantActor = (email: string, clientId: string) => `user:${email} via oauth:${clientId}`;

export class GrantKeys {
  constructor(
    private readonly deps: GrantKeyDeps,
    private readonly secret: string,
  ) {}

  newGrantId(): string {
    return newId('key', this.deps.clock.now());
  }

  /** The key row of a grant just consented to, audited as a key created by the person through the client. */
  async create(grant: {
    id: string;
    accountId: string;
    clientId: string;
    clientName: string;
    actor: string;
  }) {
    const { deps } = this;
    const record: ApiKeyRecord = {
      id: grant.id,
      accountId: grant.accountId,
      name: `OAuth: ${grant.clientName}`.slice(0, 100),
      hint: GRANT_HINT,
      createdAt: nowSeconds(deps.clock),
      revokedAt: null,
      lastUsedAt: null,
    };
    const audit = draftAudit(deps, actingAs(grant.actor), 'key.create', grant.accountId, grant.id, {
      name: record.name,
      oauth_client: grant.clientId,
    });
    await deps.store.keys.create(record, grantDigest(this.secret, grant.id), audit);
  }

  /** Revokes the grant's key row (idempotently); whether there was such a grant of this account. */
  async revoke(grantId: string, actor: string, accountId?: string): Promise<boolean> {
    const { deps } = this;
    const key = await deps.store.keys.get(grantId);
    if (!key || key.hint !== GRANT_HINT || (accountId !== undefined && key.accountId !== accountId))
      return false;
    await deps.store.keys.revoke(
      grantId,
      nowSeconds(deps.clock),
      draftAudit(deps, actingAs(actor), 'key.revoke', key.accountId, grantId, {}),
    );
    return true;
  }

  /** The account's grants, newest first (the console's Connected apps). */
  async list(accountId: string): Promise<ApiKeyRecord[]> {
    const keys = await this.deps.store.keys.list(accountId);
    return keys.filter((k) => k.hint === GRANT_HINT).sort((a, b) => (a.id < b.id ? 1 : -1));
  }
}
