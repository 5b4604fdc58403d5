/**
 * @module The authorization server: oidc-provider configured for MCP connectors. Authorization
 * code with PKCE S256 only, public clients, dynamic registration and Client ID Metadata Documents,
 * one resource (`<public url>/mcp`, also when `resource` is left out), opaque access tokens of at
 * most an hour, refresh tokens that rotate (a reused one revokes the grant: the library's rule),
 * and revocation, where revoking any token ends its grant.
 */
import Provider, {
  type Configuration,
  errors,
  interactionPolicy,
  type KoaContextWithOIDC,
} from 'oidc-provider';
import type { OAuthStore } from '../store/oauth-store.js';
import { inRequestScope, storeAdapter } from './adapter.js';
import { cookieKeys, signingKey } from './secrets.js';
import { MCP_SCOPE, mcpResource, ROUTES, SCOPES } from './settings.js';

export interface ProviderOptions {
  /** The issuer: TOOLGATE_PUBLIC_URL (no trailing slash). */
  publicUrl: string;
  store: OAuthStore;
  /** The key secret every server shares. */
  secret: string;
  /** Access token lifetime in seconds (at most 3600). */
  accessTokenTtl: number;
  refreshTokenTtl: number;
  /** Outgoing requests for Client ID Metadata Documents (tests pass one that trusts their own CA). */
  fetch?: Configuration['fetch'];
  /** Whether the grant's key row is active (not revoked; its account not closed). */
  grantActive?: (grantId: string) => Promise<boolean>;
  /** Whether a redirect URI may be `http:` on a host that is not loopback (never in production). */
  isAllowedRedirect: (uri: string) => boolean;
}

/** `<public url>/mcp`: the one resource tokens are for, equal byte for byte to the connector's URL. */

export function createProvider(opts: ProviderOptions): Provider {
  const resource = mcpResource(opts.publicUrl);
  const policy = consentPolicy();
  const configuration: Configuration = {
    adapter: storeAdapter(
      opts.store,
      {
        // A store that cannot answer: 503 temporarily_unavailable (Retry-After below), never 500.
        unavailable: () =>
          Object.assign(new errors.TemporarilyUnavailable('the database is unavailable; retry shortly'), {
            status: 503,
            statusCode: 503,
            expose: true,
          }),
        alreadyUsed: () => new errors.InvalidGrant('refresh token already used'),
      },
      opts.grantActive,
    ),
    // Public clients only (PKCE is their proof): no secret is issued, none is accepted.
    clientAuthMethods: ['none'],
    clients: [],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      // The library's default (RS256) needs an RSA key; the one key here is ES256.
      id_token_signed_response_alg: 'ES256',
    },
    scopes: [...SCOPES],
    claims: { openid: ['sub'] },
    responseTypes: ['code'],
    pkce: { required: () => true },
    routes: ROUTES,
    jwks: { keys: [signingKey(opts.secret)] },
    cookies: { keys: cookieKeys(opts.secret) },
    enabledJWA: { idTokenSigningAlgValues: ['ES256'] },
    conformIdTokenClaims: true,
    // The library's accountId is the person's subject (server.ts personSubject): an opaque HMAC of
    // the email, so the ID token's `sub` never carries the email.
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    // The consent page is the console's (src/console/pages/consent.ts).
    interactions: { url: (_ctx, interaction) => `/console/consent/${interaction.uid}`, policy },
    rotateRefreshToken: true,
    // Every token is its grant's: a connector whose token is revoked is disconnected.
    revokeGrantPolicy: () => true,
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    // A connector's tokens outlive the browser session it was allowed in (and a person's other
    // connections made in that browser): they end with their grant, not the session.
    expiresWithSession: () => false,
    ttl: {
      AccessToken: opts.accessTokenTtl,
      AuthorizationCode: 60,
      RefreshToken: opts.refreshTokenTtl,
      Grant: opts.refreshTokenTtl,
      Session: 24 * 3600,
      Interaction: 3600,
      IdToken: 3600,
    },
    features: features(opts, resource),
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
    renderError: (ctx: KoaContextWithOIDC, out) => {
      ctx.type = 'json';
      ctx.body = out;
    },
  };
  const provider = new Provider(opts.publicUrl, configuration);
  // Its URLs are built from the request; the mount rewrites Host and proto to the public URL.
  provider.proxy = true;
  provider.use(answerMiddleware);
  return provider;
}

/** The consent prompt, asked on every authorization (the account is chosen each time). */
function consentPolicy() {
  const policy = interactionPolicy.base();
  // The person chooses the account on every authorization, even when a session and a grant for the
  // client exist: a grant is one account's, and the choice is theirs each time.
  policy
    .get('consent')
    ?.checks.add(
      new interactionPolicy.Check('account_choice', 'the account is chosen on every authorization', (ctx) =>
        ctx.oidc.result?.consent?.grantId
          ? interactionPolicy.Check.NO_NEED_TO_PROMPT
          : interactionPolicy.Check.REQUEST_PROMPT,
      ),
    );
  return policy;
}

/** The library's features: registration, revocation, client metadata documents and the one resource. */
function features(opts: ProviderOptions, resource: string): Configuration['features'] {
  return {
    devInteractions: { enabled: false },
    registration: { enabled: true, idFactory: () => crypto.randomUUID() },
    revocation: { enabled: true },
    userinfo: { enabled: false },
    clientIdMetadataDocument: {
      enabled: true,
      ack: 'draft-02',
      allowClient: (_ctx, client) => client.redirectUris?.every((u) => opts.isAllowedRedirect(u)) ?? false,
    },
    resourceIndicators: {
      enabled: true,
      // claude.ai leaves `resource` out of /authorize: that means /mcp.
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, requested) => {
        if (requested !== resource) throw new errors.InvalidTarget(`the only resource here is ${resource}`);
        return {
          scope: MCP_SCOPE,
          audience: resource,
          accessTokenTTL: opts.accessTokenTtl,
          accessTokenFormat: 'opaque',
        };
      },
    },
  };
}

/**
 * Around every request of the library: its rotation scope (adapter.ts); a 503's `Retry-After`; the
 * token answer's scope listing what was granted (the access token's, and `openid` and
 * `offline_access` when an ID token and a refresh token came back with it).
 */
async function answerMiddleware(ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> {
  await inRequestScope(next);
  if (ctx.status === 503) ctx.set('retry-after', '1');
  // The token answer's scope lists what was granted: the access token's, and `openid` and
  // `offline_access` when an ID token and a refresh token came back with it.
  const body = ctx.body as Record<string, unknown> | undefined;
  if (ctx.oidc?.route === 'token' && ctx.status === 200 && typeof body?.access_token === 'string') {
    const granted = new Set(
      String(body.scope ?? '')
        .split(' ')
        .filter(Boolean),
    );
    if (body.id_token) granted.add('openid');
    if (body.refresh_token) granted.add('offline_access');
    body.scope = SCOPES.filter((s) => granted.has(s)).join(' ');
  }
}
