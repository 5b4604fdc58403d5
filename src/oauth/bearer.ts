/**
 * @module An OAuth access token as a bearer on /mcp and /api/v1/tools: it answers as a key does
 * ({account, key id = the grant's id}). A token verified once is remembered (its account, grant and
 * expiry) so that a call costs one Map lookup more than a key's; its grant's key row is asked of the
 * same read cache keys use on every call, so a revoked grant is refused at once on every server.
 */

import type { Clock } from '../domain/clock.js';
import { fail, ok, type Result } from '../domain/errors.js';
import type { AuthenticatedKey } from '../service/keys.js';
import type { Reads } from '../store/cached-reads.js';

interface Verified {
  found: AuthenticatedKey;
  answer: Result<AuthenticatedKey>;
  digest: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
  /** The second its use was last told (last_used_at, as a key's: at most once a second). */
  usedAt: number;
}

/** What the token store says of a token: its grant, account and expiry, or nothing when it is not valid for /mcp. */
export type TokenLookup = (token: string) => Promise<{ grantId: string; expiresAt: number } | undefined>;

/** Most tokens remembered; past it the oldest are forgotten (and looked up again if they come back). */
const MAX_REMEMBERED = 10_000;
/** Longer than any OAuth token is; shorter than nothing a key may be (so the two never meet). */
const MIN_TOKEN_LENGTH = 32;
const MAX_TOKEN_LENGTH = 256;

export class BearerTokens {
  private readonly remembered = new Map<string, Verified>();

  constructor(
    private readonly deps: {
      reads: Pick<Reads, 'findActiveKey'>;
      clock: Clock;
      lookup: TokenLookup;
      digestOf: (grantId: string) => string;
      /** Notes a grant's use, as a key's (KeyUsageRecorder.touch). */
      touch?: (keyId: string, at: number) => void;
    },
  ) {}

  authenticate(token: string): Result<AuthenticatedKey> | Promise<Result<AuthenticatedKey>> {
    const known = this.remembered.get(token);
    if (known !== undefined) {
      if (known.expiresAt <= this.deps.clock.now()) return this.forget(token);
      const active = this.deps.reads.findActiveKey(known.digest);
      if (active instanceof Promise) return active.then((a) => (a ? this.used(known) : this.forget(token)));
      return active ? this.used(known) : this.forget(token);
    }
    if (token.length < MIN_TOKEN_LENGTH || token.length > MAX_TOKEN_LENGTH) return fail('invalid_api_key');
    return this.verify(token);
  }

  /** Forgets every token of a grant on this server (the change feed does the same for the others). */
  forgetGrant(grantId: string): void {
    for (const [token, v] of this.remembered) if (v.found.keyId === grantId) this.remembered.delete(token);
  }

  private async verify(token: string): Promise<Result<AuthenticatedKey>> {
    const found = await this.deps.lookup(token);
    if (!found || found.expiresAt <= this.deps.clock.now()) return fail('invalid_api_key');
    const digest = this.deps.digestOf(found.grantId);
    const active = await this.deps.reads.findActiveKey(digest);
    if (!active || active.keyId !== found.grantId) return fail('invalid_api_key');
    // The account is the grant's key row's: the one chosen at consent, closed with it.
    const auth: AuthenticatedKey = { keyId: found.grantId, accountId: active.accountId };
    if (this.remembered.size >= MAX_REMEMBERED) {
      const oldest = this.remembered.keys().next().value;
      if (oldest !== undefined) this.remembered.delete(oldest);
    }
    const verified = { found: auth, answer: ok(auth), digest, expiresAt: found.expiresAt, usedAt: -1 };
    this.remembered.set(token, verified);
    return this.used(verified);
  }

  private used(v: Verified): Result<AuthenticatedKey> {
    if (this.deps.touch !== undefined) {
      const t = Math.floor(this.deps.clock.now() / 1000);
      if (v.usedAt !== t) {
        v.usedAt = t;
        this.deps.touch(v.found.keyId, t);
      }
    }
    return v.answer;
  }

  private forget(token: string): Result<never> {
    this.remembered.delete(token);
    return fail('invalid_api_key');
  }
}
