/**
 * @module The OAuth surface on toolgate's app: RFC 9728 protected resource metadata, RFC 8414
 * authorization server metadata, and the provider mounted at /oauth through @fastify/middie (in a
 * scope of its own, so no other route runs its hook). Every answer, the library's own included,
 * carries the web headers (src/http/web-headers.ts). The consent page is the console's.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import middie from '@fastify/middie';
import type { FastifyInstance } from 'fastify';
import { webHeaders } from '../http/web-headers.js';
import { isStoreUnavailable } from './adapter.js';
import type { OAuthServer } from './server.js';
import { MCP_SCOPE, MOUNT, redirectAllowed, SCOPES } from './settings.js';

const MAX_REGISTRATION_BYTES = 64 * 1024;
/** What one registration may store: its metadata as JSON, its name, its redirect URIs. */
export const REGISTRATION_CAPS = {
  metadataBytes: 8 * 1024,
  clientName: 100,
  redirectUris: 10,
  redirectUriLength: 2000,
} as const;

export async function oauthRoutes(app: FastifyInstance, opts: { oauth: OAuthServer }) {
  const { oauth } = opts;
  // First of this scope's hooks: set on the raw answer before the library (middie's hook) writes it.
  await webHeaders(app, { https: oauth.publicUrl.startsWith('https://') });

  const resourceMetadata = () => ({
    resource: oauth.resource,
    authorization_servers: [oauth.publicUrl],
    scopes_supported: [MCP_SCOPE],
    bearer_methods_supported: ['header'],
    resource_name: oauth.opts.resourceName ?? 'toolgate',
  });
  for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp'])
    app.get(path, { schema: { hide: true } }, async (_request, reply) => {
      reply.header('access-control-allow-origin', '*');
      return resourceMetadata();
    });

  // RFC 8414's path for the issuer, with the document the provider serves as OpenID discovery.
  let metadata: string | undefined;
  for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'])
    app.get(path, { schema: { hide: true } }, async (_request, reply) => {
      if (metadata === undefined) {
        const answer = await app.inject({ method: 'GET', url: `${MOUNT}/.well-known/openid-configuration` });
        if (answer.statusCode !== 200) throw new Error(`OAuth metadata answered ${answer.statusCode}`);
        metadata = answer.body;
      }
      return reply
        .header('content-type', 'application/json; charset=utf-8')
        .header('access-control-allow-origin', '*')
        .send(metadata);
    });

  await app.register(async (scope) => {
    // Before middie's hook: registrations per client address (request.ip, TOOLGATE_TRUST_PROXY's).
    scope.addHook('onRequest', async (request, reply) => {
      if (request.method !== 'POST' || request.url.split('?')[0] !== `${MOUNT}/register`) return;
      const admitted = oauth.admitRegistration(request.ip);
      if (admitted === undefined || admitted.allowed) return;
      return reply
        .code(429)
        .header('retry-after', String(admitted.resetSeconds))
        .header('cache-control', 'no-store')
        .send({
          error: 'rate_limited',
          error_description: 'too many registrations from this address; retry later',
        });
    });
    await scope.register(middie);
    scope.use(MOUNT, (req: IncomingMessage, res: ServerResponse) => {
      const pub = new URL(oauth.publicUrl);
      // The provider builds its URLs from the request: it is told the public ones, whatever proxy is in front.
      req.headers.host = pub.host;
      req.headers['x-forwarded-host'] = pub.host;
      req.headers['x-forwarded-proto'] = pub.protocol.slice(0, -1);
      if (req.method === 'GET' && req.url?.startsWith('/authorize?')) {
        req.url = withKnownScopes(req.url);
        // The provider finds where it is mounted by comparing the two.
        (req as IncomingMessage & { originalUrl?: string }).originalUrl = `${MOUNT}${req.url}`;
      }
      const registering = req.method === 'POST' && req.url?.split('?')[0] === '/register';
      void (async () => {
        if (registering) {
          if (!(await registration(req, res))) return;
          await oauth.makeRoomForRegistration();
        }
        (await oauth.oidc()).callback()(req, res);
      })().catch((err) => {
        if (isStoreUnavailable(err)) {
          if (!res.headersSent)
            res.writeHead(503, {
              'content-type': 'application/json',
              'retry-after': '1',
              'cache-control': 'no-store',
            });
          res.end(JSON.stringify({ error: 'temporarily_unavailable', error_description: 'retry shortly' }));
          return;
        }
        scope.log.error({ err }, 'OAuth request failed');
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'server_error' }));
      });
    });
    // Routes for middie's hook to run on; the provider answers before any handler would.
    scope.all(`${MOUNT}/*`, { schema: { hide: true } }, async () => undefined);
    scope.all(MOUNT, { schema: { hide: true } }, async () => undefined);
  });
}

/**
 * Reads a registration request before the provider does: unknown scopes are dropped (claude.ai asks
 * for `claudeai`), null members are left out, and a redirect URI that is neither https nor loopback
 * is refused. The provider then reads the request as rewritten (req.body).
 */
async function registration(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  const refuse = (error: string, description: string) => {
    res.writeHead(400, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify({ error, error_description: description }));
    return false;
  };
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_REGISTRATION_BYTES) return refuse('invalid_request', 'the registration is too large');
    chunks.push(chunk as Buffer);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return refuse('invalid_request', 'the registration must be a JSON object');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return refuse('invalid_request', 'the registration must be a JSON object');
  const metadata = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== null)) as Record<
    string,
    unknown
  >;
  if (typeof metadata.scope === 'string') {
    const known = metadata.scope.split(' ').filter((s) => (SCOPES as readonly string[]).includes(s));
    if (known.length > 0) metadata.scope = known.join(' ');
    else delete metadata.scope;
  }
  // Public clients only: a client asking for a secret is registered without one, as RFC 7591 lets
  // the server do (its answer says `none`), and PKCE is its proof.
  if (metadata.token_endpoint_auth_method !== undefined) metadata.token_endpoint_auth_method = 'none';
  const caps = REGISTRATION_CAPS;
  const tooLong = Object.entries(metadata).find(
    ([k, v]) =>
      (k === 'client_name' || k.startsWith('client_name#')) &&
      (typeof v !== 'string' || v.length > caps.clientName),
  );
  if (tooLong)
    return refuse(
      'invalid_client_metadata',
      `${tooLong[0]} must be a string of at most ${caps.clientName} characters`,
    );
  const uris = metadata.redirect_uris;
  if (Array.isArray(uris) && uris.length > caps.redirectUris)
    return refuse('invalid_client_metadata', `at most ${caps.redirectUris} redirect URIs`);
  if (Array.isArray(uris) && uris.some((u) => typeof u === 'string' && u.length > caps.redirectUriLength))
    return refuse(
      'invalid_client_metadata',
      `a redirect URI has at most ${caps.redirectUriLength} characters`,
    );
  const json = JSON.stringify(metadata);
  if (Buffer.byteLength(json) > caps.metadataBytes)
    return refuse('invalid_client_metadata', `the client metadata is at most ${caps.metadataBytes} bytes`);
  if (Array.isArray(uris) && uris.some((u) => typeof u !== 'string' || !redirectAllowed(u)))
    return refuse('invalid_redirect_uri', 'redirect URIs must be https, or http on a loopback host');
  (req as IncomingMessage & { body?: unknown }).body = json;
  return true;
}

/**
 * /authorize asks for the known scopes among those requested, and always `mcp`: an unknown scope is
 * ignored, not refused (claude.ai asks for `claudeai` alone), and a request that named none still
 * gets a token for /mcp.
 */
export function withKnownScopes(url: string): string {
  const [path, query = ''] = url.split('?', 2) as [string, string?];
  const params = new URLSearchParams(query);
  const asked = (params.get('scope') ?? '')
    .split(' ')
    .filter((s) => (SCOPES as readonly string[]).includes(s));
  params.set('scope', [...new Set([...asked, MCP_SCOPE])].join(' '));
  return `${path}?${params}`;
}
