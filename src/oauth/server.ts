/**
 * @module The OAuth side of a serving process: the provider (built on first use, once the public URL
 * is known), the bearer check it lends the key service, the grants' key rows, and the pruning of
 * expired rows and of registrations no grant uses.
 */
import type Provider from 'oidc-provider';
import { type Clock, nowSeconds, systemClock } from '../domain/clock.js';
import { type LimitState, SlidingWindowLimiter } from '../domain/rate-limit.js';
import { personSubject } from '../domain/users.js';
import type { KeyUsageRecorder } from '../service/key-usage.js';
import type { Reads } from '../store/cached-reads.js';
import type { Store } from '../store/store.js';
import { BearerTokens } from './bearer.js';
import { GrantKeys, grantDigest } from './grants.js';
import type { ProviderOptions } from './provider.js';
import { mcpResource, redirectAllowed } from './settings.js';

export interface OAuthOptions {
  /** The grants' key rows and the provider's own rows (store.oauth). */
  store: Pick<Store, 'keys' | 'oauth'>;
  /** Where a grant's key row is found on the hot path (the read cache, or the store). */
  reads: Pick<Reads, 'findActiveKey'>;
  /** Where a grant's use is noted (last_used_at), as a key's is; none in tools that do not serve. */
  keyUsage?: Pick<KeyUsageRecorder, 'touch'>;
  /** The key secret every server shares (cookie and signing keys derive from it). */
  secret: string;
  /** TOOLGATE_PUBLIC_URL, or the address the server listens on: asked on first use. */
  publicUrl: () => string;
  /** Where a failure in the background (pruning, a revocation's key row) is logged. */
  onError?: (err: unknown, message: string) => void;
  /** Seconds; at most 3600 (default). */
  accessTokenTtl?: number;
  /** The protected resource's name for people (its metadata's `resource_name`): the brand's. */
  resourceName?: string;
  /** Seconds; 30 days by default. */
  refreshTokenTtl?: number;
  fetch?: ProviderOptions['fetch'];
  /** The provider's clock is the system's; tests of expiry pass a short TTL, not another clock. */
  clock?: Clock;
  /** How long an unused registration (no grant names it) is kept, seconds (default 50 minutes). */
  unusedClientSeconds?: number;
  /** Registrations per client address per 10 minutes, per server (default 20; 0 = no limit). */
  registrationsPerAddress?: number;
  /** Most unused registrations kept; past it the oldest unused ones go first (default 1,000). */
  maxUnusedClients?: number;
}

const PRUNE_EVERY_MS = 10 * 60_000;
/** With the prune every 10 minutes, an unused registration is gone within the hour. */
export const UNUSED_CLIENT_SECONDS = 50 * 60;
export const REGISTRATIONS_PER_ADDRESS = 20;
export const REGISTRATION_WINDOW_SECONDS = 10 * 60;
export const MAX_UNUSED_CLIENTS = 1000;

export class OAuthServer {
  readonly grants: GrantKeys;
  readonly bearer: BearerTokens;
  private provider: Promise<Provider> | undefined;
  private pruning: NodeJS.Timeout | undefined;
  private readonly registrations: SlidingWindowLimiter | undefined;

  constructor(readonly opts: OAuthOptions) {
    const clock = opts.clock ?? systemClock;
    const perAddress = opts.registrationsPerAddress ?? REGISTRATIONS_PER_ADDRESS;
    if (perAddress > 0)
      this.registrations = new SlidingWindowLimiter(perAddress, REGISTRATION_WINDOW_SECONDS, clock);
    this.grants = new GrantKeys({ store: opts.store, clock }, opts.secret);
    const { keyUsage } = opts;
    this.bearer = new BearerTokens({
      reads: opts.reads,
      clock,
      digestOf: (grantId) => grantDigest(opts.secret, grantId),
      lookup: (token) => this.lookup(token),
      ...(keyUsage ? { touch: (keyId: string, at: number) => keyUsage.touch(keyId, at) } : {}),
    });
  }

  get publicUrl(): string {
    return this.opts.publicUrl().replace(/\/+$/, '');
  }

  get resource(): string {
    return mcpResource(this.publicUrl);
  }

  /**
   * The provider, made on first use: oidc-provider is loaded then (some 300 ms and 29 MiB), so a
   * server whose clients use only API keys never pays for it.
   */
  oidc(): Promise<Provider> {
    this.provider ??= this.makeProvider();
    return this.provider;
  }

  private async makeProvider(): Promise<Provider> {
    const { createProvider } = await import('./provider.js');
    const provider = createProvider({
      publicUrl: this.publicUrl,
      store: this.opts.store.oauth,
      secret: this.opts.secret,
      accessTokenTtl: Math.min(this.opts.accessTokenTtl ?? 3600, 3600),
      refreshTokenTtl: this.opts.refreshTokenTtl ?? 30 * 24 * 3600,
      isAllowedRedirect: redirectAllowed,
      // A refresh asks for the grant: its key row must still be active, as every call asks of it.
      grantActive: async (grantId) => {
        const key = await this.opts.store.keys.get(grantId);
        return key !== undefined && key.revokedAt === null;
      },
      ...(this.opts.fetch ? { fetch: this.opts.fetch } : {}),
    });
    // A grant the library revokes (the revocation endpoint, a reused refresh token) ends its key row too.
    provider.on('grant.revoked', (ctx, grantId: string) => {
      const clientId = ctx.oidc?.client?.clientId ?? 'unknown';
      this.bearer.forgetGrant(grantId);
      void this.grants
        .revoke(grantId, `oauth:${clientId}`)
        .catch((err) => this.opts.onError?.(err, 'could not revoke the key row of a revoked grant'));
    });
    return provider;
  }

  /** Revokes an account's grant (the console, as `actor`): its key row, then its tokens and the grant itself. */
  async revokeGrant(grantId: string, accountId: string, actor: string): Promise<boolean> {
    const done = await this.grants.revoke(grantId, actor, accountId);
    if (!done) return false;
    this.bearer.forgetGrant(grantId);
    const oauth = this.opts.store.oauth;
    for (const model of ['AccessToken', 'RefreshToken', 'AuthorizationCode'])
      await oauth.revokeByGrantId(model, grantId);
    await oauth.destroy('Grant', grantId);
    return true;
  }

  /**
   * The subject of a person's grants (the library's accountId, the ID token's `sub`): an HMAC of
   * their email under the key secret, not the account: one browser session may connect several of
   * a person's accounts without the provider taking it for another person's sign-in (the account is
   * the grant's key row's). The email it stands for is kept beside it (a `Person` row of the OAuth
   * store) for the console's Connected apps.
   */
  async subjectOf(email: string): Promise<string> {
    const sub = personSubject(this.opts.secret, email);
    await this.opts.store.oauth.upsert({
      model: 'Person',
      id: sub,
      payload: JSON.stringify({ email: email.toLowerCase() }),
      grantId: null,
      clientId: null,
      uid: null,
      createdAt: nowSeconds(this.opts.clock ?? systemClock),
      expiresAt: null,
    });
    return sub;
  }

  /** The email a subject stands for. */
  async emailOf(sub: string | undefined): Promise<string | undefined> {
    if (sub === undefined) return undefined;
    const row = await this.opts.store.oauth.find('Person', sub, nowSeconds(this.opts.clock ?? systemClock));
    return row ? (JSON.parse(row.payload) as { email?: string }).email : undefined;
  }

  /** Deletes expired rows and unused registrations; how many. */
  prune(): Promise<number> {
    const now = nowSeconds(this.opts.clock ?? systemClock);
    return this.opts.store.oauth.prune(now, now - (this.opts.unusedClientSeconds ?? UNUSED_CLIENT_SECONDS));
  }

  /** Counts a registration from `address` against its limit: whether it may go on, and when to retry. */
  admitRegistration(address: string): LimitState | undefined {
    return this.registrations?.take(address);
  }

  /** Before a registration: the oldest unused registrations deleted, so that at most the ceiling are kept with it. */
  makeRoomForRegistration(): Promise<number> {
    return this.opts.store.oauth.trimUnusedClients(
      Math.max(0, (this.opts.maxUnusedClients ?? MAX_UNUSED_CLIENTS) - 1),
    );
  }

  start(): void {
    this.pruning = setInterval(
      () => this.prune().catch((err) => this.opts.onError?.(err, 'could not prune OAuth rows')),
      PRUNE_EVERY_MS,
    );
    this.pruning.unref();
  }

  stop(): void {
    clearInterval(this.pruning);
  }

  private async lookup(token: string) {
    const at = await (await this.oidc()).AccessToken.find(token);
    if (!at || at.isExpired || !at.grantId) return undefined;
    if (at.aud !== this.resource) return undefined;
    return {
      grantId: at.grantId,
      expiresAt: (at.exp ?? 0) * 1000,
    };
  }
}
