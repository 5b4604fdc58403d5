/** @module Use cases on API keys: create (the key is returned once), list, revoke, authenticate. */
import type { AccountStatus } from '../domain/accounts.js';
import {
  type ApiKeyRecord,
  digestKey,
  generateKey,
  isWellFormedKey,
  KeyDigests,
  keyHint,
} from '../domain/api-keys.js';
import { fail, ok, type Result } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { type AuditContext, draftAudit } from './audit.js';
import { now, type ServiceDeps } from './context.js';
import { keyRecord } from './views.js';

export type KeyRecord = ReturnType<typeof keyRecord>;

export interface AuthenticatedKey {
  keyId: string;
  accountId: string;
}

export type KeyVerification =
  | { valid: true; account_id: string; key_id: string; account_status: AccountStatus; plan: string }
  | { valid: false; code: 'invalid_api_key' };

/** Another kind of bearer (an OAuth access token) that answers as a key does. */
export interface BearerCheck {
  authenticate(presented: string): Result<AuthenticatedKey> | Promise<Result<AuthenticatedKey>>;
}

/** What KeyService notes of a key it remembers: its last answer, and when its use was noted. */
interface KeyNotes {
  /** The key found for it last, and the same answered as a Result (made again only when another is found). */
  found: AuthenticatedKey;
  answer: Result<AuthenticatedKey>;
  /** The second of the key's last use told to the usage recorder: told at most once a second. */
  usedAt: number;
}

export class KeyService {
  private readonly digests: KeyDigests<KeyNotes>;

  constructor(
    private readonly deps: ServiceDeps,
    /** Bearers that are not keys (OAuth access tokens), asked only of what is not shaped as a key. */
    private readonly otherBearers?: BearerCheck,
  ) {
    this.digests = new KeyDigests<KeyNotes>(deps.keySecret);
  }

  /**
   * `opts.activeAccount` (the console): refuse a suspended account too. An operator (admin API, CLI)
   * may still make a key for a suspended account, to hand over once it is active again.
   */
  async create(
    accountId: string,
    name?: unknown,
    by?: AuditContext,
    opts: { activeAccount?: boolean } = {},
  ): Promise<Result<KeyRecord & { key: string }>> {
    if (name != null && (typeof name !== 'string' || name.length > 100)) {
      return fail('invalid_arguments', 'name must be a string of at most 100 characters.');
    }
    const account = await this.deps.store.accounts.get(accountId);
    if (!account) return fail('not_found', `No account "${accountId}".`);
    if (account.status === 'closed')
      return fail('conflict', 'The account is closed; it cannot have new keys.');
    if (opts.activeAccount && account.status === 'suspended')
      return fail('conflict', 'The account is suspended; it cannot have new keys.');
    const key = generateKey(this.deps.keyPrefix);
    const record: ApiKeyRecord = {
      id: newId('key', this.deps.clock.now()),
      accountId,
      name: (name as string | undefined) ?? null,
      hint: keyHint(key),
      createdAt: now(this.deps),
      revokedAt: null,
      lastUsedAt: null,
    };
    // The audit entry names the key by its id: never the key, its digest or its hint.
    const audit = draftAudit(this.deps, by, 'key.create', accountId, record.id, { name: record.name });
    await this.deps.store.keys.create(record, digestKey(this.deps.keySecret, key), audit);
    return ok({ ...keyRecord(record), key });
  }

  async list(accountId: string): Promise<Result<KeyRecord[]>> {
    if (!(await this.deps.store.accounts.get(accountId)))
      return fail('not_found', `No account "${accountId}".`);
    return ok((await this.deps.store.keys.list(accountId)).map(keyRecord));
  }

  async revoke(keyId: string, by?: AuditContext): Promise<Result<KeyRecord>> {
    // Read first for the account the audit entry names; a key never changes account.
    const existing = await this.deps.store.keys.get(keyId);
    if (!existing) return fail('not_found', `No key "${keyId}".`);
    const audit = draftAudit(this.deps, by, 'key.revoke', existing.accountId, keyId, {});
    const key = await this.deps.store.keys.revoke(keyId, now(this.deps), audit);
    return key ? ok(keyRecord(key)) : fail('not_found', `No key "${keyId}".`);
  }

  /**
   * For tools served elsewhere (POST /admin/v1/keys/verify): whether a key is valid, and whose.
   * Malformed, unknown and revoked keys get the same answer, as on the tools API.
   */
  async verify(presented: string): Promise<KeyVerification> {
    const result = await this.authenticate(presented);
    const snapshot = result.ok ? await this.deps.reads.getSnapshot(result.value.accountId) : undefined;
    if (!result.ok || !snapshot) return { valid: false, code: 'invalid_api_key' };
    return {
      valid: true,
      account_id: snapshot.account.id,
      key_id: result.value.keyId,
      account_status: snapshot.account.status,
      plan: snapshot.plan.id,
    };
  }

  /**
   * The account a presented key belongs to: at once when memory suffices (a key the read cache
   * knows, or a refusal that needs no lookup), else a promise. Malformed, unknown and revoked keys
   * get the same answer, so a caller learns nothing about which it was.
   */
  authenticate(presented: string | undefined): Result<AuthenticatedKey> | Promise<Result<AuthenticatedKey>> {
    // A key that authenticated before: its digest from memory, without the HMAC.
    const known = presented === undefined ? undefined : this.digests.recall(presented);
    // Asked only of a bearer that is not shaped as a key: a known key takes no step more.
    if (known === undefined && presented && !isWellFormedKey(presented, this.deps.keyPrefix)) {
      if (this.otherBearers !== undefined) return this.otherBearers.authenticate(presented);
    }
    const digest = known !== undefined ? known.digest : this.digestOf(presented);
    if (typeof digest !== 'string') return digest;
    const key = presented as string;
    const found = this.deps.reads.findActiveKey(digest);
    if (found instanceof Promise) return found.then((f) => this.answer(key, digest, f));
    if (found !== undefined && known?.notes !== undefined) return this.noted(known.notes, found);
    return this.answer(key, digest, found);
  }

  private answer(
    key: string,
    digest: string,
    found: AuthenticatedKey | undefined,
  ): Result<AuthenticatedKey> | Promise<Result<AuthenticatedKey>> {
    if (found !== undefined) return this.accepted(key, digest, found);
    if (this.deps.previousKeySecrets?.length) {
      return this.underPreviousSecret(key, digest).then((f) =>
        f === undefined ? this.refused(key) : this.accepted(key, digest, f),
      );
    }
    return this.refused(key);
  }

  private refused(key: string): Result<never> {
    this.digests.forget(key);
    return fail('invalid_api_key');
  }

  /** The digest to look up, or why there is nothing to look up. */
  private digestOf(presented: string | undefined): string | Result<never> {
    if (presented === undefined || presented === '') return fail('missing_api_key');
    if (!isWellFormedKey(presented, this.deps.keyPrefix)) return fail('invalid_api_key');
    return this.digests.of(presented);
  }

  private accepted(key: string, digest: string, found: AuthenticatedKey): Result<AuthenticatedKey> {
    const known = this.digests.remember(key, digest);
    known.notes ??= { found, answer: ok(found), usedAt: -1 };
    return this.noted(known.notes, found);
  }

  /** The answer for a key that authenticated as `found` (the same object while the cache holds it); its use noted, at most once a second. */
  private noted(notes: KeyNotes, found: AuthenticatedKey): Result<AuthenticatedKey> {
    if (notes.found !== found) {
      notes.found = found;
      notes.answer = ok(found);
    }
    const keyUsage = this.deps.keyUsage;
    if (keyUsage !== undefined) {
      const t = now(this.deps);
      if (notes.usedAt !== t) {
        notes.usedAt = t;
        keyUsage.touch(found.keyId, t);
      }
    }
    return notes.answer;
  }

  /** While a secret is rotated out: a key stored under an older secret authenticates, and moves to the current one. */
  private async underPreviousSecret(presented: string, currentDigest: string) {
    for (const secret of this.deps.previousKeySecrets ?? []) {
      const oldDigest = digestKey(secret, presented);
      const found = await this.deps.reads.findActiveKey(oldDigest);
      if (found) {
        await this.deps.store.keys.rehash(found.keyId, oldDigest, currentDigest);
        return found;
      }
    }
    return undefined;
  }
}
